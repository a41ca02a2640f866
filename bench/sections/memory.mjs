// Memory: resident set size of a basic-fixture server on the memory driver, idle, with many live
// sessions, and with those sessions revoked (their ids in the in-process revocation set).

import { Agent } from 'node:http'
import { BASIC, MEMORY_ENV } from '../lib/fixtures.mjs'
import { httpRequest, inParallel, login, logout } from '../lib/http.mjs'
import { log, rssOf, sleep, startServer, stopServer } from '../lib/processes.mjs'
import { fmtInt, fmtMiB } from '../lib/stats.mjs'

const IN_FLIGHT = 8
/** Live sessions of the full run. */
export const FULL_SESSIONS = 10_000
/** Wait before reading RSS, so that the allocations of the last requests settle. */
const SETTLE_MS = 1500

async function settledRss(pid) {
  await sleep(SETTLE_MS)
  return rssOf(pid)
}

/** Measures and reports the memory section. */
export async function measure(opts) {
  const count = opts.memorySessions
  const server = await startServer(BASIC.entry, MEMORY_ENV)
  const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT })
  const rows = []
  try {
    // One request through the module, so that its context exists in the idle figure.
    const warm = await login(agent, server.port, 'bench-memory-warm')
    rows.push(['idle after start (one session)', await settledRss(server.pid)])

    log(`memory: creating ${fmtInt(count)} sessions (${IN_FLIGHT} in flight)`)
    const sessions = Array.from({ length: count })
    await inParallel(count, IN_FLIGHT, async i => (sessions[i] = await login(agent, server.port, `bench-memory-${i}`)))
    rows.push([`${fmtInt(count)} live sessions`, await settledRss(server.pid)])

    log(`memory: logging ${fmtInt(count)} sessions out (${IN_FLIGHT} in flight)`)
    await inParallel(count, IN_FLIGHT, i => logout(agent, server.port, sessions[i].cookie))
    // Their access tokens are refused now: the revocation set holds every logged-out session.
    for (const { token } of [sessions[0], sessions.at(-1)]) {
      const res = await httpRequest(agent, server.port, 'GET', '/api/protected/hello', { headers: { authorization: `Bearer ${token}` } })
      if (res.status !== 401) throw new Error(`GET /api/protected/hello with a logged-out session's token answered ${res.status}, expected 401`)
    }
    const ok = await httpRequest(agent, server.port, 'GET', '/api/protected/hello', { headers: { authorization: `Bearer ${warm.token}` } })
    if (ok.status !== 200) throw new Error(`GET /api/protected/hello with a live session's token answered ${ok.status}`)
    rows.push([`${fmtInt(count)} sessions revoked (${fmtInt(count)} ids in the revocation set)`, await settledRss(server.pid)])
  }
  finally {
    agent.destroy()
    await stopServer(server)
  }
  const idle = rows[0][1]
  const lines = [
    '### Memory',
    '',
    `Resident set size (\`VmRSS\` of \`/proc/<pid>/status\`, read ${SETTLE_MS / 1000} s after the last request) of one basic-fixture server on the \`memory\` driver: after start (one session logged in), with ${fmtInt(count)} live sessions (code + token exchange each, ${IN_FLIGHT} in flight), and after logging all of them out, which puts their ${fmtInt(count)} session ids in the in-process revocation set (a logged-out session's access token is checked to answer 401).${count === FULL_SESSIONS ? '' : ` This run uses ${fmtInt(count)} sessions instead of ${fmtInt(FULL_SESSIONS)} (\`--quick\` or \`--memory-sessions\`).`} RSS includes whatever the garbage collector has not returned yet, so per-session figures are rough.`,
    '',
    '| State | RSS | Over idle | Per session |',
    '| --- | ---: | ---: | ---: |',
    ...rows.map(([state, rss], i) => `| ${state} | ${fmtMiB(rss)} MiB | ${i ? `${fmtMiB(rss - idle)} MiB` : '–'} | ${i ? `${fmtInt((rss - idle) / count)} B` : '–'} |`),
  ]
  return { lines, goals: [] }
}
