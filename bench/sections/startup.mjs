// Start-up: time from spawning a server process to its first 200 on a protected route (a bearer
// token minted beforehand by another process of the same storage), with fs and with Redis.

import { Agent } from 'node:http'
import { join } from 'node:path'
import { BASIC, fsEnv, redisEnv } from '../lib/fixtures.mjs'
import { httpRequest, login } from '../lib/http.mjs'
import { log, removeTempDir, sleep, spawnServer, startServer, stopServer, tempDir } from '../lib/processes.mjs'
import { uniquePrefix } from '../lib/redis.mjs'
import { fmtMs, median } from '../lib/stats.mjs'

const POLL_MS = 2
const DEADLINE_MS = 20_000

/** Polls GET `path` on a new connection every {@link POLL_MS} ms until it answers 200: ms since spawn. */
async function firstOk(server, path, headers) {
  for (;;) {
    const elapsed = performance.now() - server.spawnedAt
    if (elapsed > DEADLINE_MS) throw new Error(`GET ${path} did not answer 200 within ${DEADLINE_MS / 1000} s of the spawn:\n${server.output()}`)
    const { child } = server
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`Server exited early (${child.exitCode ?? child.signalCode}):\n${server.output()}`)
    try {
      const res = await httpRequest(false, server.port, 'GET', path, { headers, timeout: 2000 })
      if (res.status === 200) return performance.now() - server.spawnedAt
    }
    catch { /* not listening yet */ }
    await sleep(POLL_MS)
  }
}

/** `starts` fresh processes of one storage: medians of the times to "Listening on" and to each route's first 200. */
async function startTimes(driver, starts) {
  const dir = driver === 'fs' ? tempDir('svc-auth-bench-start-') : undefined
  const redis = driver === 'redis' ? uniquePrefix('startup') : undefined
  const env = dir ? fsEnv(join(dir, 'records')) : redisEnv(redis.prefix)
  try {
    const first = await startServer(BASIC.entry, env)
    const agent = new Agent({ keepAlive: false })
    const { token } = await login(agent, first.port, 'bench-startup')
    agent.destroy()
    await stopServer(first)
    const times = { listening: [], protected: [], public: [] }
    for (let i = 1; i <= starts; i++) {
      log(`start-up: ${driver} start ${i}/${starts}`)
      const server = await spawnServer(BASIC.entry, env)
      const listening = new Promise(r => server.child.stdout.on('data', () => /Listening on/.test(server.output()) && r(performance.now() - server.spawnedAt)))
      try {
        const [protectedMs, publicMs] = await Promise.all([
          firstOk(server, '/api/protected/hello', { authorization: `Bearer ${token}` }),
          firstOk(server, '/api/public/hello', {}),
        ])
        times.protected.push(protectedMs)
        times.public.push(publicMs)
        times.listening.push(await listening)
      }
      finally {
        await stopServer(server)
      }
    }
    return { driver, starts, listening: median(times.listening), protected: median(times.protected), public: median(times.public), min: Math.min(...times.protected), max: Math.max(...times.protected) }
  }
  finally {
    if (dir) removeTempDir(dir)
    await redis?.release()
  }
}

/** Measures and reports the start-up section. */
export async function measure(opts) {
  const rows = [await startTimes('fs', opts.starts), await startTimes('redis', opts.starts)]
  const lines = [
    '### Start-up',
    '',
    `Time from spawning \`node .output/server/index.mjs\` of the basic fixture to its first 200, median of ${opts.starts} fresh processes per storage driver (fs in a temp dir, the run's Redis under a unique prefix). A first process of the same storage logs a session in beforehand; each new process is then polled every ${POLL_MS} ms (a new connection each time) on \`GET /api/protected/hello\` with that session's bearer token and on \`GET /api/public/hello\`. A serverless deployment pays this on every cold start.`,
    '',
    '| Driver | "Listening on" printed | First 200, public route | First 200, protected route | Protected, fastest – slowest |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...rows.map(r => `| ${r.driver} | ${fmtMs(r.listening)} ms | ${fmtMs(r.public)} ms | **${fmtMs(r.protected)} ms** | ${fmtMs(r.min)} – ${fmtMs(r.max)} ms |`),
  ]
  return { lines, goals: [] }
}
