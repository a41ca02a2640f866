// Host util `revokeUserSessions` (through the basic fixture's admin route) for a user with a few
// sessions, on a throwaway Redis that is empty and then holds a million unrelated keys: the
// user's sessions are found without a scan.

import { Agent } from 'node:http'
import { BASIC } from '../lib/fixtures.mjs'
import { httpRequest, login } from '../lib/http.mjs'
import { HOST, log, startServer, stopServer } from '../lib/processes.mjs'
import { startThrowawayRedis } from '../lib/redis.mjs'
import { fmtInt, fmtMs, goal, percentile, status } from '../lib/stats.mjs'

const SESSIONS_PER_USER = 5
const STORES = [['empty store', 0], ['1,000,000 unrelated keys', 1_000_000]]

/** Timed runs against one server on the throwaway Redis: `{ p50, p95, runs }`. */
async function timeRevocations(redisPort, runs) {
  const server = await startServer(BASIC.entry, {
    NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'redis',
    NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL: `redis://${HOST}:${redisPort}`,
  })
  const agent = new Agent({ keepAlive: true, maxSockets: 4 })
  try {
    const times = []
    for (let run = 0; run < runs; run++) {
      const sub = `bench-revoke-${run}`
      for (let i = 0; i < SESSIONS_PER_USER; i++) await login(agent, server.port, sub)
      const started = performance.now()
      const res = await httpRequest(agent, server.port, 'POST', '/api/test/user-sessions', { body: { userId: sub, revokeAll: true } })
      const elapsed = performance.now() - started
      if (res.status !== 200 || JSON.parse(res.text).revoked !== SESSIONS_PER_USER) throw new Error(`revoking ${sub}'s sessions answered ${res.status}: ${res.text}`)
      // The first run is not counted (connections and code paths warm up).
      if (run > 0) times.push(elapsed)
    }
    times.sort((a, b) => a - b)
    return { p50: percentile(times, 0.5), p95: percentile(times, 0.95), runs: times.length }
  }
  finally {
    agent.destroy()
    await stopServer(server)
  }
}

/** Measures and reports the user-revocation section. */
export async function measure(opts) {
  const redis = await startThrowawayRedis()
  const results = []
  try {
    for (const [label, keys] of STORES) {
      log(`user revocation: ${label} (${opts.revocationRuns} runs)`)
      await redis.client.flushall()
      if (keys) await redis.client.call('DEBUG', 'POPULATE', String(keys), 'unrelated')
      const dbsize = await redis.client.dbsize()
      results.push({ label, dbsize, ...(await timeRevocations(redis.port, opts.revocationRuns)) })
    }
  }
  finally {
    await redis.stop()
  }
  const [empty, big] = results
  const goals = [goal('Revoking a user\'s sessions next to 1,000,000 keys, p95 (ms)', big.p95, '≤', 10)]
  const lines = [
    '### Revoking a user\'s sessions',
    '',
    `\`revokeUserSessions(userId)\` (through the fixture's admin route, one HTTP round trip included) for a user with ${SESSIONS_PER_USER} sessions, on a throwaway local Redis, first empty and then holding a million unrelated keys (\`DEBUG POPULATE\`). The user's sessions come from their session map, not from a scan; the first run of each is not counted.`,
    '',
    '| Redis | Keys in Redis | Runs | p50 | p95 |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...results.map(r => `| ${r.label} | ${fmtInt(r.dbsize)} | ${r.runs} | ${fmtMs(r.p50)} ms | ${fmtMs(r.p95)} ms |`),
    '',
    `With a million keys: p95 **${fmtMs(big.p95)} ms** (target ≤ 10 ms: ${status(goals[0].met)}); ratio to the empty store (p50): **${(big.p50 / empty.p50).toFixed(2)}**.`,
  ]
  return { lines, goals }
}
