// The module's cost on routes that do not need it: requests/s and server CPU per request of
// `GET /api/public/hello` in the app with the module against the same app built without it.

import { APPS, ensureBuilt, serverEntry } from '../fixtures/apps.mjs'

/** Goal: requests/s with the module ÷ without it. */
const TARGET_RATIO = 0.97
const PATH = '/api/public/hello'

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
const fmtInt = n => Math.round(n).toLocaleString('en-US')

async function get(server, path) {
  const res = await fetch(server.url + path)
  return { status: res.status, body: await res.text() }
}

/** Both servers answer the public route; only the module's server refuses the protected one. */
async function checkServers(servers) {
  for (const [name, server] of Object.entries(servers)) {
    const open = await get(server, PATH)
    if (open.status !== 200) throw new Error(`${APPS[name].name}: GET ${PATH} answered ${open.status}: ${open.body.slice(0, 200)}`)
    const guarded = await get(server, '/api/protected/hello')
    const expected = name === 'with' ? 401 : 200
    if (guarded.status !== expected) throw new Error(`${APPS[name].name}: GET /api/protected/hello without a token answered ${guarded.status}, expected ${expected}`)
  }
}

/** One autocannon run against a server, with the server's CPU time (user + system) during it. */
async function round(server, opts, tools) {
  const cpuBefore = tools.cpuSecondsOf(server.pid)
  const result = await tools.cannon(server.url + PATH, { connections: opts.connections, duration: opts.duration })
  const cpu = tools.cpuSecondsOf(server.pid) - cpuBefore
  const requests = result.requests.total
  return { reqPerSec: requests / result.duration, cpuMicrosPerRequest: (cpu * 1e6) / requests, p99: result.latency.p99 }
}

/**
 * Starts the built app with and without the module (each from its own directory, the module's fs
 * records in a temporary directory), warms both up, then measures them in alternating rounds
 * (`opts.rounds` of `opts.duration` s each, `opts.connections` connections, the order swapped
 * every round) and reports the median of the per-round ratios.
 */
export async function measure(opts, tools) {
  await ensureBuilt(opts, tools)
  const rounds = Math.max(1, Math.floor(opts.rounds))
  const dataDir = await tools.tempDir('svc-auth-bench-cost-')
  const env = { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_BASE: dataDir }
  const servers = {}
  try {
    servers.with = await tools.startServer(serverEntry(APPS.with), env, APPS.with.dir)
    servers.without = await tools.startServer(serverEntry(APPS.without), env, APPS.without.dir)
    tools.log(`module cost: ${APPS.with.name} pid ${servers.with.pid} on ${servers.with.url}, ${APPS.without.name} pid ${servers.without.pid} on ${servers.without.url}`)
    await checkServers(servers)

    if (opts.warmup > 0) {
      for (const name of ['with', 'without']) {
        tools.log(`module cost: warm-up ${APPS[name].name} (${opts.warmup} s, not counted)`)
        await tools.cannon(servers[name].url + PATH, { connections: opts.connections, duration: opts.warmup })
      }
    }
    const runs = []
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 ? ['without', 'with'] : ['with', 'without']
      const run = {}
      for (const name of order) {
        tools.log(`module cost: round ${r + 1}/${rounds} ${APPS[name].name} (${opts.duration} s, ${opts.connections} connections)`)
        run[name] = await round(servers[name], opts, tools)
      }
      runs.push(run)
    }
    return report(runs, opts)
  }
  finally {
    await Promise.all(Object.values(servers).map(server => tools.stopServer(server)))
  }
}

function report(runs, opts) {
  const ratio = median(runs.map(run => run.with.reqPerSec / run.without.reqPerSec))
  const cpuRatio = median(runs.map(run => run.with.cpuMicrosPerRequest / run.without.cpuMicrosPerRequest))
  const lines = []
  lines.push('### Module cost on routes that do not need it')
  lines.push('')
  lines.push(`\`GET ${PATH}\` (a route without an \`auth\` rule, no token sent) on the built app with the module (\`bench/fixtures/with-module\`) and on the same app built without it (\`bench/fixtures/without-module\`): autocannon, ${opts.connections} connections, ${runs.length} alternating rounds of ${opts.duration} s after a ${opts.warmup} s warm-up of each, both servers running side by side. Server CPU per request is the server process's user + system time over the round (from /proc) divided by its requests. Ratios are per round (with ÷ without), then the median.`)
  lines.push('')
  lines.push('| Round | With: req/s | Without: req/s | Ratio | With: CPU µs/req | Without: CPU µs/req | CPU ratio |')
  lines.push('| ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  runs.forEach((run, i) => {
    lines.push(`| ${i + 1} | ${fmtInt(run.with.reqPerSec)} | ${fmtInt(run.without.reqPerSec)} | ${(run.with.reqPerSec / run.without.reqPerSec).toFixed(3)} | ${run.with.cpuMicrosPerRequest.toFixed(1)} | ${run.without.cpuMicrosPerRequest.toFixed(1)} | ${(run.with.cpuMicrosPerRequest / run.without.cpuMicrosPerRequest).toFixed(3)} |`)
  })
  lines.push('')
  const met = ratio >= TARGET_RATIO
  lines.push(`Requests/s with ÷ without the module: **${ratio.toFixed(3)}** (target ≥ ${TARGET_RATIO}: ${met ? 'met' : '**not met**'}); server CPU per request with ÷ without: **${cpuRatio.toFixed(3)}** (the steadier of the two when other processes share the machine).`)
  return {
    lines,
    goals: [{ name: 'Public route requests/s with ÷ without the module', value: Number(ratio.toFixed(3)), target: `≥ ${TARGET_RATIO}`, met }],
  }
}
