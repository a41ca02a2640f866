// The audit log's cost: full password logins (p95) and POST /auth/refresh per second with the audit
// log on and off, on fs and Redis. Two builds of test/fixtures/password, the same but for `audit: {}`
// (SVC_FIXTURE_AUDIT=1 builds the second into .output-audit), run side by side: every phase on both
// servers in turn, the first in turn alternating by round.

import { Agent } from 'node:http'
import { join } from 'node:path'
import { fsEnv, PASSWORD, PASSWORD_AUDIT, redisEnv } from '../lib/fixtures.mjs'
import { codeCookieOf, exchangeCode, httpRequest } from '../lib/http.mjs'
import { log, removeTempDir, startServer, stopServer, tempDir } from '../lib/processes.mjs'
import { uniquePrefix } from '../lib/redis.mjs'
import { fmtInt, fmtMs, goal, latencyStats, percentile, status } from '../lib/stats.mjs'
import { refreshLoops } from './refresh.mjs'

const PASSWORD_TEXT = 'Bench-Password-42x'
/** Full logins per server per round. */
const LOGINS = { full: 60, quick: 10 }
/** The provider's default bcrypt cost: a login as a real app has it (the fixture's own is 8, for fast tests). */
const HASH_COST = 12
/** Seconds of refreshes per server per round. */
const REFRESH_SECONDS = { full: 4, quick: 2 }
const ROUNDS = { full: 4, quick: 2 }

/** The code the fixture's delivery handler got last for `email` and `action`. */
async function lastCode(agent, port, email, action) {
  const res = await httpRequest(agent, port, 'GET', `/api/test/codes?email=${encodeURIComponent(email)}&action=${action}`)
  const code = res.status === 200 ? JSON.parse(res.text).at(-1)?.code : undefined
  if (!code) throw new Error(`No ${action} code was sent to ${email} (${res.status}: ${res.text.slice(0, 200)})`)
  return code
}

/** A verify link followed, and its authorization code exchanged: `{ token, cookie }`. */
async function verifyAndExchange(agent, port, path, code) {
  const verify = await httpRequest(agent, port, 'GET', `${path}?code=${code}`)
  const match = /[?&]code=([\w-]+)/.exec(verify.headers.location ?? '')
  if (verify.status !== 302 || !match) throw new Error(`GET ${path} answered ${verify.status}: ${verify.text.slice(0, 200)}`)
  return exchangeCode(agent, port, match[1], codeCookieOf(verify))
}

/** A whole password login: the password, the emailed code, the verify link, the code exchange. */
async function passwordLogin(agent, port, email) {
  const res = await httpRequest(agent, port, 'POST', '/auth/password/login', { body: { email, password: PASSWORD_TEXT } })
  if (res.status !== 200) throw new Error(`POST /auth/password/login answered ${res.status}: ${res.text.slice(0, 200)}`)
  return verifyAndExchange(agent, port, '/auth/password/login-verify', await lastCode(agent, port, email, 'login'))
}

/** Starts one server of `entry` on `driver` with storage of its own, and registers its user. */
async function startRun(entry, driver, label) {
  const run = { label, agent: new Agent({ keepAlive: true, maxSockets: 4 }), email: `bench-audit-${label}-${process.pid}@example.com`, releases: [] }
  let env
  if (driver === 'fs') {
    const dir = tempDir('svc-auth-bench-audit-')
    run.releases.push(() => removeTempDir(dir))
    env = fsEnv(join(dir, 'records'))
  }
  else {
    const { prefix, release } = uniquePrefix(`audit-${label}`)
    run.releases.push(release)
    env = redisEnv(prefix)
  }
  run.server = await startServer(entry, { ...env, NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false', NUXT_SVC_AUTH_PROVIDERS_PASSWORD_PASSWORD_HASH_ROUNDS: String(HASH_COST) })
  const port = run.server.port
  const reg = await httpRequest(run.agent, port, 'POST', '/auth/password/register', { body: { email: run.email, password: PASSWORD_TEXT } })
  if (reg.status !== 200) throw new Error(`POST /auth/password/register answered ${reg.status}: ${reg.text}`)
  run.session = { ...(await verifyAndExchange(run.agent, port, '/auth/password/register-verify', await lastCode(run.agent, port, run.email, 'register'))), refreshes: 0 }
  log(`audit: ${driver} server with the audit log ${label} (pid ${run.server.pid})`)
  return run
}

async function stopRun(run) {
  run.agent.destroy()
  if (run.server) await stopServer(run.server)
  for (const release of run.releases) await release()
}

/** Rounds of logins and refreshes on the audit-off and audit-on servers of `driver`, side by side. */
async function measureDriver(driver, opts) {
  const size = opts.quick ? 'quick' : 'full'
  const runs = []
  try {
    runs.push(await startRun(PASSWORD.entry, driver, 'off'), await startRun(PASSWORD_AUDIT.entry, driver, 'on'))
    const results = runs.map(() => ({ logins: [], refreshes: 0, seconds: 0 }))
    // Warm-up, not counted: the first requests load code and open the storage.
    for (const run of runs) for (let i = 0; i < 3; i++) await passwordLogin(run.agent, run.server.port, run.email)
    for (let round = 1; round <= ROUNDS[size]; round++) {
      const order = round % 2 ? [0, 1] : [1, 0]
      log(`audit: ${driver} round ${round}/${ROUNDS[size]}: ${LOGINS[size]} logins, then ${REFRESH_SECONDS[size]} s of refreshes, on each server`)
      for (const i of order) {
        const { agent, server, email } = runs[i]
        for (let n = 0; n < LOGINS[size]; n++) {
          const t0 = performance.now()
          await passwordLogin(agent, server.port, email)
          results[i].logins.push(performance.now() - t0)
        }
      }
      for (const i of order) {
        const r = await refreshLoops(runs[i].agent, runs[i].server.port, [runs[i].session], REFRESH_SECONDS[size])
        results[i].refreshes += r.ok
        results[i].seconds += r.seconds
      }
    }
    // latencyStats sorts the latencies: the p95 is read after it.
    return results.map(r => ({ login: { ...latencyStats(r.logins), p95: percentile(r.logins, 0.95) }, logins: r.logins.length, refreshPerSec: r.refreshes / r.seconds }))
  }
  finally {
    for (const run of runs) await stopRun(run)
  }
}

/** Measures and reports the audit section. */
export async function measure(opts) {
  const rows = []
  for (const driver of ['fs', 'redis']) {
    const [off, on] = await measureDriver(driver, opts)
    rows.push({ driver, off, on })
  }
  const goals = rows.flatMap(({ driver, off, on }) => [
    goal(`${driver}: password login p95, audit on ÷ off`, on.login.p95 / off.login.p95, '≤', 1.05),
    goal(`${driver}: refreshes/s, audit on ÷ off`, on.refreshPerSec / off.refreshPerSec, '≥', 0.95),
  ])
  const lines = [
    '### The audit log\'s cost',
    '',
    `Two builds of \`test/fixtures/password\` (bcrypt cost ${HASH_COST}, the provider's default; rate limits off)` + ', the second with `audit: {}` (`SVC_FIXTURE_AUDIT=1`), each started on the driver with storage of its own (fs: a temp dir; Redis: the run\'s server under a unique prefix). A login is the whole flow, one after another: `POST /auth/password/login`, the emailed code read from the fixture, `GET /auth/password/login-verify`, `POST /auth/token` (the audit log records the login when its session starts). Refreshes: one session in a closed loop. Every phase runs on both servers in turn, the first alternating by round.',
    '',
    '| Driver | Audit | Logins | Login p50 | Login p95 | Refreshes/s |',
    '| --- | --- | ---: | ---: | ---: | ---: |',
  ]
  for (const { driver, off, on } of rows) {
    for (const [label, r] of [['off', off], ['on', on]]) lines.push(`| ${driver} | ${label} | ${fmtInt(r.logins)} | ${fmtMs(r.login.p50)} ms | ${fmtMs(r.login.p95)} ms | ${fmtInt(r.refreshPerSec)} |`)
  }
  lines.push('')
  for (const { driver, off, on } of rows) lines.push(`- ${driver}: the audit log adds ${fmtMs(on.login.p50 - off.login.p50)} ms to the login p50 and ${fmtMs(on.login.p95 - off.login.p95)} ms to its p95.`)
  for (const g of goals) lines.push(`- ${g.name}: **${g.value.toFixed(3)}** (target ${g.target}: ${status(g.met)}).`)
  return { lines, goals }
}
