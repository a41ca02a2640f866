// Refresh near the storage limit: POST /auth/refresh per second with the memory, the fs, the redis
// and the upstash (Redis over HTTP) drivers, sequential on one session and with 10 concurrent
// sessions, next to the storage limit measured in the same rounds (durable small-file writes, Redis
// round trips, HTTP round trips to the REST server; none for memory: what is left is the server's
// own work). Then the native endpoint's body mode (POST /auth/native/refresh, the refresh token in
// the body) next to the cookie's on one server, on fs and Redis: the same rotation, so the same rate.

import { Agent } from 'node:http'
import { join } from 'node:path'
import { buildBaseline } from '../lib/baseline.mjs'
import { BASIC, fsEnv, MEMORY_ENV, redisEnv, upstashEnv } from '../lib/fixtures.mjs'
import { inParallel, login, nativeLogin, nativeRefresh, refresh } from '../lib/http.mjs'
import { cpuSecondsOf, log, removeTempDir, startServer, stopServer, tempDir } from '../lib/processes.mjs'
import { uniquePrefix } from '../lib/redis.mjs'
import { durableWritesPerSec, redisRoundTripsPerSec, upstashRoundTripsPerSec } from '../lib/storage-probes.mjs'
import { startRestServer } from '../lib/upstash.mjs'
import { append, fmtInt, fmtMs, goal, latencyStats, status } from '../lib/stats.mjs'

/** Refreshes/s of the earlier Redis store (several round trips per rotation) with 10 concurrent sessions. */
const REDIS_BASELINE = 1252
const LIMITS = {
  // No storage to wait for: the server's own work per refresh (no limit is measured).
  memory: { label: '', probe: undefined },
  fs: { label: 'durable writes/s (write + fsync + rename)', probe: (ctx, clients, seconds) => durableWritesPerSec(join(ctx.dir, 'probe'), { parallel: clients, seconds }) },
  redis: { label: 'Redis SET round trips/s', probe: (ctx, clients, seconds) => redisRoundTripsPerSec(ctx.probePrefix, { clients, seconds }) },
  upstash: { label: 'REST SET round trips/s (HTTP)', probe: (ctx, clients, seconds) => upstashRoundTripsPerSec(ctx.rest, ctx.probePrefix, { clients, seconds }) },
}

/** Server environment of each driver. */
const ENV = {
  memory: () => MEMORY_ENV,
  fs: ctx => fsEnv(join(ctx.dir, 'records')),
  redis: ctx => redisEnv(ctx.prefix),
  upstash: ctx => upstashEnv(ctx.prefix, ctx.rest),
}

/** One refresh of a session by its cookie (the default of {@link refreshLoops}). */
const cookieStep = async (agent, port, session) => {
  session.cookie = (await refresh(agent, port, session.cookie)).cookie
}

/** One refresh of a native session, its refresh token in the body. */
const bodyStep = async (agent, port, session) => {
  session.refreshToken = (await nativeRefresh(agent, port, session.refreshToken)).refreshToken
}

/**
 * `clients` sessions refreshed in closed loops for `seconds`, each refresh sending the cookie of
 * the previous answer of its session (`step`: another way to refresh one). Any failed refresh aborts the run.
 */
export async function refreshLoops(agent, port, sessions, seconds, step = cookieStep) {
  const latencies = []
  let ok = 0
  let failure
  const started = performance.now()
  const deadline = started + seconds * 1000
  await Promise.all(sessions.map(async (session) => {
    while (!failure && performance.now() < deadline) {
      const t0 = performance.now()
      try {
        await step(agent, port, session)
      }
      catch (error) {
        failure ??= new Error(`${error.message} (after ${session.refreshes} refreshes of that session)`)
        return
      }
      latencies.push(performance.now() - t0)
      session.refreshes++
      ok++
    }
  }))
  if (failure) throw failure
  const elapsed = (performance.now() - started) / 1000
  return { ok, seconds: elapsed, latencies }
}

/** Starts a server of `driver` from `entry` with its own storage, and logs in `n` sessions. */
async function startDriverServer(driver, opts, entry, nodeArgs) {
  const ctx = {}
  const releases = []
  if (driver === 'fs') ctx.dir = tempDir('svc-auth-bench-fs-')
  else {
    // The probe's keys under a prefix of their own, out of the server's sight.
    for (const [key, label] of [['prefix', 'refresh'], ['probePrefix', 'probe']]) {
      const { prefix, release } = uniquePrefix(label)
      ctx[key] = prefix
      releases.push(release)
    }
  }
  if (driver === 'upstash') {
    ctx.rest = await startRestServer()
    releases.push(() => ctx.rest.stop())
  }
  const n = opts.refreshConcurrency
  const agent = new Agent({ keepAlive: true, maxSockets: n })
  const stop = async () => {
    agent.destroy()
    if (run.server) await stopServer(run.server)
    if (ctx.dir) removeTempDir(ctx.dir)
    for (const release of releases) await release()
  }
  const run = { ctx, agent, stop, sessions: Array.from({ length: n }), server: undefined }
  try {
    run.server = await startServer(entry, ENV[driver](ctx), undefined, nodeArgs)
    log(`refresh: ${driver} server pid ${run.server.pid}${entry === BASIC.entry ? '' : ` (${entry})`}`)
    await inParallel(n, n, async i => (run.sessions[i] = { ...(await login(agent, run.server.port, `bench-${driver}-${i}`)), refreshes: 0 }))
    if (opts.warmup > 0) await refreshLoops(agent, run.server.port, run.sessions, Math.min(opts.warmup, 2))
  }
  catch (error) {
    await stop()
    throw error
  }
  return run
}

/**
 * Rounds of [limit with 1 client, refresh with 1 session, limit with `n` clients, refresh with `n`
 * sessions] against one server of `driver` per entry of `entries` (this build, and a baseline
 * build to compare with), all started first. Each phase runs on every server in turn, in the
 * opposite order every other round, so a load that comes and goes on a shared machine falls on
 * every build alike. `nodeArgs` go to the servers (`--cpu-prof`); `spans` (optional) receives the
 * monotonic time span `{ from, to }` in µs of every refresh phase. Resolves one row list per entry.
 */
export async function measureDrivers(driver, opts, entries, { nodeArgs = [], spans } = {}) {
  const n = opts.refreshConcurrency
  const runs = []
  try {
    for (const entry of entries) runs.push(await startDriverServer(driver, opts, entry, nodeArgs))
    const results = runs.map(() => Object.fromEntries([1, n].map(c => [c, { ok: 0, seconds: 0, cpu: 0, latencies: [], limit: [] }])))
    const hr = () => Number(process.hrtime.bigint() / 1000n)
    const { probe } = LIMITS[driver]
    for (let round = 1; round <= opts.refreshRounds; round++) {
      for (const clients of [1, n]) {
        const order = runs.map((_, i) => i)
        if (round % 2 === 0) order.reverse()
        for (const i of order) {
          const { ctx, agent, server, sessions } = runs[i]
          log(`refresh: ${driver}${runs.length > 1 ? ` (server ${i + 1} of ${runs.length})` : ''} round ${round}/${opts.refreshRounds}, ${clients} session(s): ${probe ? 'storage limit, then refreshes' : 'refreshes'} (${opts.refreshDuration} s each)`)
          if (probe) results[i][clients].limit.push(await probe(ctx, clients, opts.refreshDuration))
          const from = hr()
          const cpuBefore = cpuSecondsOf(server.pid)
          const r = await refreshLoops(agent, server.port, sessions.slice(0, clients), opts.refreshDuration)
          results[i][clients].cpu += cpuSecondsOf(server.pid) - cpuBefore
          spans?.push({ from, to: hr() })
          results[i][clients].ok += r.ok
          results[i][clients].seconds += r.seconds
          append(results[i][clients].latencies, r.latencies)
        }
      }
    }
    return results.map(result => Object.entries(result).map(([clients, r]) => ({
      driver,
      clients: Number(clients),
      ok: r.ok,
      seconds: r.seconds,
      perSec: r.ok / r.seconds,
      /** Server CPU time (user + system, all its threads) per refresh, in µs. */
      cpuMicros: (r.cpu * 1e6) / r.ok,
      limit: r.limit.length ? r.limit.reduce((a, b) => a + b, 0) / r.limit.length : undefined,
      ...latencyStats(r.latencies),
    })))
  }
  finally {
    for (const run of runs) await run.stop()
  }
}

/** {@link measureDrivers} with one server: this build's, or `entry` (another build). */
export async function measureDriver(driver, opts, { nodeArgs = [], spans, entry = BASIC.entry } = {}) {
  const [rows] = await measureDrivers(driver, opts, [entry], { nodeArgs, spans })
  return rows
}

/**
 * Cookie and body mode on one server of `driver`, in 1-second slices that alternate between the two (the
 * first of each pair alternating too), so a load that comes and goes falls on both alike; with 1 and `n`
 * sessions of each: `[{ clients, cookie, body }]` in refreshes/s.
 */
async function measureBodyMode(driver, opts) {
  const n = opts.refreshConcurrency
  const run = await startDriverServer(driver, opts, BASIC.entry)
  try {
    const { agent, server } = run
    const natives = []
    await inParallel(n, n, async i => (natives[i] = { ...(await nativeLogin(agent, server.port, `bench-native-${driver}-${i}`)), refreshes: 0 }))
    if (opts.warmup > 0) await refreshLoops(agent, server.port, natives, Math.min(opts.warmup, 2), bodyStep)
    const totals = Object.fromEntries([1, n].map(c => [c, { cookie: { ok: 0, seconds: 0, cpu: 0 }, body: { ok: 0, seconds: 0, cpu: 0 } }]))
    for (let round = 1; round <= opts.refreshRounds; round++) {
      for (const clients of [1, n]) {
        log(`refresh: ${driver} cookie and body mode, round ${round}/${opts.refreshRounds}, ${clients} session(s) (${opts.refreshDuration} s each, in 1 s slices)`)
        for (let slice = 0; slice < opts.refreshDuration; slice++) {
          for (const mode of (round + slice) % 2 ? ['cookie', 'body'] : ['body', 'cookie']) {
            const cpuBefore = cpuSecondsOf(server.pid)
            const r = mode === 'cookie'
              ? await refreshLoops(agent, server.port, run.sessions.slice(0, clients), 1)
              : await refreshLoops(agent, server.port, natives.slice(0, clients), 1, bodyStep)
            totals[clients][mode].cpu += cpuSecondsOf(server.pid) - cpuBefore
            totals[clients][mode].ok += r.ok
            totals[clients][mode].seconds += r.seconds
          }
        }
      }
    }
    const cpuMicros = mode => (mode.cpu * 1e6) / mode.ok
    return Object.entries(totals).map(([clients, t]) => ({ driver, clients: Number(clients), cookie: t.cookie.ok / t.cookie.seconds, body: t.body.ok / t.body.seconds, cookieCpu: cpuMicros(t.cookie), bodyCpu: cpuMicros(t.body) }))
  }
  finally {
    await run.stop()
  }
}

/** Measures and reports the refresh section. */
export async function measure(opts) {
  const baseline = opts.baseline ? await buildBaseline(opts.baseline) : undefined
  const rows = []
  for (const driver of ['memory', 'fs', 'redis', 'upstash']) {
    // The baseline build beside it, phase by phase in the same rounds (not upstash: builds from
    // before the driver do not have it).
    const withBaseline = baseline && driver !== 'upstash'
    const [current, before = []] = await measureDrivers(driver, opts, withBaseline ? [BASIC.entry, baseline.entry] : [BASIC.entry])
    for (const row of current) rows.push({ ...row, baseline: before.find(b => b.clients === row.clients) })
  }
  const bodyRows = [...await measureBodyMode('fs', opts), ...await measureBodyMode('redis', opts)]
  const n = opts.refreshConcurrency
  const find = (driver, clients) => rows.find(r => r.driver === driver && r.clients === clients)
  const memory1 = find('memory', 1)
  const memoryN = find('memory', n)
  const fs1 = find('fs', 1)
  const fsN = find('fs', n)
  const redisN = find('redis', n)
  const redis1 = find('redis', 1)
  const upstashN = find('upstash', n)
  const upstash1 = find('upstash', 1)
  const goals = [
    goal('fs refresh, sequential on one session (refreshes/s)', fs1.perSec, '≥', 1000),
    goal(`fs refresh, ${n} concurrent sessions / sequential`, fsN.perSec / fs1.perSec, '≥', 1.5),
    goal(`Redis refresh, ${n} concurrent sessions / ${fmtInt(REDIS_BASELINE)}/s baseline`, redisN.perSec / REDIS_BASELINE, '≥', 2.5),
    ...bodyRows.map(r => goal(`${r.driver} body-mode / cookie refresh, ${r.clients} session(s)`, r.body / r.cookie, '≥', 0.9)),
  ]
  const lines = [
    '### Token refresh near the storage limit',
    '',
    `\`POST /auth/refresh\` in closed loops, each refresh sending the cookie of the previous answer of its session; every refresh must answer 200 with a token and a new cookie (anything else aborts the run). One server per driver (memory, fs in a temp dir, the run's Redis under a unique key prefix, deleted at the end; upstash through the tests' loopback REST server, \`test/helpers/upstash-rest-server.mjs\` in a process of its own, in front of that Redis), ${n} sessions created first. In each of ${opts.refreshRounds} round(s), for 1 session and then for ${n} concurrent sessions: the storage limit for ${opts.refreshDuration} s (not on memory: it has none), then refreshes for ${opts.refreshDuration} s. The storage limit is measured with as many clients as sessions: on fs, durable writes of a small file next to the server's records (open a temp file, write ~300 bytes, fsync, close, rename over the target, as the fs driver writes a record); on Redis, SET round trips (one command in flight per ioredis connection); over HTTP, SET requests to the REST server with the driver's client settings (one in flight per loop). "Limit ops per refresh" is the limit divided by the refresh rate: the number of such writes or round trips a refresh costs in time.`,
    '',
    '| Driver | Sessions | Refreshes/s | Refreshes | p50 latency | p99 latency | Storage limit | Refresh / limit | Limit ops per refresh |',
    '| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |',
  ]
  for (const r of rows) {
    const limit = r.limit === undefined ? ['–', '–', '–'] : [`${fmtInt(r.limit)} ${LIMITS[r.driver].label}`, (r.perSec / r.limit).toFixed(3), (r.limit / r.perSec).toFixed(1)]
    lines.push(`| ${r.driver} | ${r.clients} | ${fmtInt(r.perSec)} | ${fmtInt(r.ok)} in ${r.seconds.toFixed(1)} s | ${fmtMs(r.p50)} ms | ${fmtMs(r.p99)} ms | ${limit.join(' | ')} |`)
  }
  if (baseline) {
    lines.push(
      '',
      `The same phases against a build of the basic fixture at \`${baseline.rev}\` (${baseline.commit.slice(0, 10)}), its server running beside each driver's own and every phase run on both in turn, the first in turn alternating by round (\`--baseline ${baseline.rev}\`). Server CPU per refresh is the server process's user + system time over its refresh phases (from /proc, every thread) divided by its refreshes: the steadier figure when other work shares the machine.`,
      '',
      '| Driver | Sessions | Refreshes/s | Baseline refreshes/s | × baseline | Baseline p50 | Baseline p99 | Server CPU per refresh | Baseline CPU per refresh | Baseline ÷ current CPU |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    )
    for (const r of rows.filter(row => row.baseline)) lines.push(`| ${r.driver} | ${r.clients} | ${fmtInt(r.perSec)} | ${fmtInt(r.baseline.perSec)} | **${(r.perSec / r.baseline.perSec).toFixed(2)}** | ${fmtMs(r.baseline.p50)} ms | ${fmtMs(r.baseline.p99)} ms | ${fmtInt(r.cpuMicros)} µs | ${fmtInt(r.baseline.cpuMicros)} µs | **${(r.baseline.cpuMicros / r.cpuMicros).toFixed(2)}** |`)
  }
  lines.push(
    '',
    `- memory (no storage to wait for: the server's own work): **${fmtInt(memory1.perSec)}/s** sequential, **${fmtInt(memoryN.perSec)}/s** with ${n} concurrent sessions.`,
    `- fs sequential: **${fmtInt(fs1.perSec)}/s** (target ≥ 1,000/s: ${status(goals[0].met)}).`,
    `- fs ${n} concurrent / sequential: **${goals[1].value.toFixed(2)}** (target ≥ 1.5: ${status(goals[1].met)}).`,
    `- Redis ${n} concurrent: **${fmtInt(redisN.perSec)}/s**, **${goals[2].value.toFixed(2)}×** the ${fmtInt(REDIS_BASELINE)}/s baseline of the earlier store (target ≥ 2.5×: ${status(goals[2].met)}).`,
    `- Redis over HTTP (upstash, a loopback REST server): **${fmtInt(upstash1.perSec)}/s** sequential (${(upstash1.perSec / redis1.perSec).toFixed(2)}× TCP Redis), **${fmtInt(upstashN.perSec)}/s** with ${n} concurrent sessions (${(upstashN.perSec / redisN.perSec).toFixed(2)}× TCP Redis). Every command is one HTTP request; a real deployment adds the network round trip to the provider to each.`,
  )
  lines.push(
    '',
    '#### Native apps: the refresh token in the body',
    '',
    `\`POST /auth/native/refresh\` (the refresh token in a JSON body, the successor in the answer) next to \`POST /auth/refresh\` (the cookie) on one server per driver, ${n} sessions of each logged in first; in each of ${opts.refreshRounds} round(s), with 1 and then ${n} sessions, ${opts.refreshDuration} s of each mode in 1-second slices that alternate between the two, so a load that comes and goes falls on both alike. Both run the same rotation (\`refreshSession\`): the ratio should stay near 1 (target: within 10%). Server CPU per refresh (the server process's user + system time over each mode's slices, from /proc, divided by its refreshes) is the steadier figure when other work shares the machine.`,
    '',
    '| Driver | Sessions | Cookie refreshes/s | Body refreshes/s | Body / cookie | Server CPU per cookie refresh | per body refresh | Body / cookie CPU |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...bodyRows.map(r => `| ${r.driver} | ${r.clients} | ${fmtInt(r.cookie)} | ${fmtInt(r.body)} | **${(r.body / r.cookie).toFixed(2)}** | ${fmtInt(r.cookieCpu)} µs | ${fmtInt(r.bodyCpu)} µs | **${(r.bodyCpu / r.cookieCpu).toFixed(2)}** |`),
  )
  return { lines, goals }
}
