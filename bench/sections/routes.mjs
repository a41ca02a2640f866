// Route protection: requests/s of a public route without a token and of a protected route with a
// bearer token (autocannon, alternating rounds against the same server process), with the
// revocation check on and off; and, on a server with organizations, a route with a permission
// rule against one with `auth: true`.

import { Agent } from 'node:http'
import { BASIC, MEMORY_ENV, ORG_ACCESS } from '../lib/fixtures.mjs'
import { cannon, httpRequest, login, logout } from '../lib/http.mjs'
import { cpuSecondsOf, log, startServer, stopServer } from '../lib/processes.mjs'
import { avg, fmtInt, fmtMs, goal, median, status } from '../lib/stats.mjs'

/** Measured in this order in every round: each server's public route right before its protected one. */
const VARIANTS = ['public', 'protected', 'statelessPublic', 'stateless', 'orgProtected', 'permission']
const REVOKED_SESSIONS = 200
/** The organization of the bench user on the organizations server, where its role is `admin`. */
const BENCH_ORG = `org_${'bench'.padEnd(22, '0')}`

/**
 * On the organizations server: `bench-user` an admin of {@link BENCH_ORG}, its session switched to it;
 * checks that the permission route refuses a token without the organization and accepts the new one.
 */
async function prepareOrganization(agent, server, token, cookie) {
  const seeded = await httpRequest(agent, server.port, 'POST', '/api/test/member', { body: { orgId: BENCH_ORG, userId: 'bench-user', role: 'admin' } })
  if (seeded.status !== 200) throw new Error(`POST /api/test/member answered ${seeded.status}: ${seeded.text}`)
  const denied = await httpRequest(agent, server.port, 'GET', '/api/project/hello', { headers: { authorization: `Bearer ${token}` } })
  if (denied.status !== 403) throw new Error(`GET /api/project/hello without an organization answered ${denied.status}, expected 403`)
  const switched = await httpRequest(agent, server.port, 'POST', '/auth/orgs/active', { body: { orgId: BENCH_ORG }, headers: { authorization: `Bearer ${token}`, cookie: `svc-refresh=${cookie}` } })
  if (switched.status !== 200) throw new Error(`POST /auth/orgs/active answered ${switched.status}: ${switched.text}`)
  const orgToken = JSON.parse(switched.text).accessToken
  const allowed = await httpRequest(agent, server.port, 'GET', '/api/project/hello', { headers: { authorization: `Bearer ${orgToken}` } })
  if (allowed.status !== 200 || JSON.parse(allowed.text).orgRole !== 'admin') throw new Error(`GET /api/project/hello with the organization answered ${allowed.status}: ${allowed.text}`)
  return orgToken
}

/** Logs in `bench-user`, logs out 200 other sessions and checks both routes; resolves the token and the session's cookie. */
async function prepare(agent, server) {
  const { token, cookie } = await login(agent, server.port, 'bench-user')
  for (let i = 0; i < REVOKED_SESSIONS; i++) await logout(agent, server.port, (await login(agent, server.port, `bench-revoked-${i}`)).cookie)
  const anonymous = await httpRequest(agent, server.port, 'GET', '/api/protected/hello')
  if (anonymous.status !== 401) throw new Error(`GET /api/protected/hello without a token answered ${anonymous.status}, expected 401`)
  const authed = await httpRequest(agent, server.port, 'GET', '/api/protected/hello', { headers: { authorization: `Bearer ${token}` } })
  if (authed.status !== 200 || JSON.parse(authed.text).sub !== 'bench-user') throw new Error(`GET /api/protected/hello with a token answered ${authed.status}: ${authed.text}`)
  const pub = await httpRequest(agent, server.port, 'GET', '/api/public/hello')
  if (pub.status !== 200) throw new Error(`GET /api/public/hello answered ${pub.status}: ${pub.text}`)
  return { token, cookie }
}

/** Rounds of every variant: `{ public: [{ reqPerSec, cpuMicrosPerRequest, p50, p99 }, …], … }`. */
async function run(opts) {
  // Two servers of the same build, seeded alike: one with the revocation check (the default), one
  // with `sessions.revokeAccessTokens: false`. Each route is compared with the public route of its
  // own server process, so that differences between the two processes cancel out.
  const servers = {
    on: await startServer(BASIC.entry, MEMORY_ENV),
    off: await startServer(BASIC.entry, { ...MEMORY_ENV, NUXT_SVC_AUTH_SESSIONS_REVOKE_ACCESS_TOKENS: 'false' }),
    orgs: await startServer(ORG_ACCESS.entry, MEMORY_ENV),
  }
  log(`route servers pid ${servers.on.pid} (revocation on), pid ${servers.off.pid} (revocation off), pid ${servers.orgs.pid} (organizations)`)
  const agent = new Agent({ keepAlive: true, maxSockets: 4 })
  try {
    const sessions = { on: await prepare(agent, servers.on), off: await prepare(agent, servers.off), orgs: await prepare(agent, servers.orgs) }
    const tokens = { on: sessions.on.token, off: sessions.off.token, orgs: await prepareOrganization(agent, servers.orgs, sessions.orgs.token, sessions.orgs.cookie) }
    const variant = (server, path, token) => ({ server: servers[server], path, headers: token ? { authorization: `Bearer ${tokens[server]}` } : {} })
    const variants = {
      public: variant('on', '/api/public/hello'),
      protected: variant('on', '/api/protected/hello', true),
      statelessPublic: variant('off', '/api/public/hello'),
      stateless: variant('off', '/api/protected/hello', true),
      // The same token (with `org` and `orgRole`) on both: the permission check is the only difference.
      orgProtected: variant('orgs', '/api/protected/hello', true),
      permission: variant('orgs', '/api/project/hello', true),
    }
    const once = (name, duration) => cannon(variants[name].server.url + variants[name].path, { connections: opts.connections, duration, headers: variants[name].headers })

    if (opts.warmup > 0) {
      for (const name of VARIANTS) {
        log(`routes: warm-up ${name} (${opts.warmup} s, not counted)`)
        await once(name, opts.warmup)
      }
    }
    const rounds = Object.fromEntries(VARIANTS.map(name => [name, []]))
    for (let round = 1; round <= opts.rounds; round++) {
      for (const name of VARIANTS) {
        log(`routes: round ${round}/${opts.rounds} ${name} (${opts.duration} s, ${opts.connections} connections)`)
        const { pid } = variants[name].server
        const cpuBefore = cpuSecondsOf(pid)
        const result = await once(name, opts.duration)
        const cpu = cpuSecondsOf(pid) - cpuBefore
        rounds[name].push({ reqPerSec: result.requests.average, cpuMicrosPerRequest: (cpu * 1e6) / result.requests.total, p50: result.latency.p50, p99: result.latency.p99 })
      }
    }
    return rounds
  }
  finally {
    agent.destroy()
    await Promise.all(Object.values(servers).map(stopServer))
  }
}

/** Measures and reports the routes section. */
export async function measure(opts) {
  const routes = await run(opts)
  const rps = name => avg(routes[name].map(r => r.reqPerSec))
  const cpu = name => avg(routes[name].map(r => r.cpuMicrosPerRequest))
  /** Median over the rounds of the per-round ratio of two variants (each round measures both back to back). */
  const roundRatio = (a, b, of) => median(routes[a].map((r, i) => of(r) / of(routes[b][i])))
  const ratio = roundRatio('protected', 'public', r => r.reqPerSec)
  const cpuRatio = roundRatio('public', 'protected', r => r.cpuMicrosPerRequest)
  const statelessRatio = roundRatio('stateless', 'statelessPublic', r => r.reqPerSec)
  const statelessCpuRatio = roundRatio('statelessPublic', 'stateless', r => r.cpuMicrosPerRequest)
  const permissionRatio = roundRatio('permission', 'orgProtected', r => r.reqPerSec)
  const permissionCpuRatio = roundRatio('orgProtected', 'permission', r => r.cpuMicrosPerRequest)
  const goals = [
    goal('Routes: protected / public, requests/s', ratio, '≥', 0.95),
    goal('Routes: protected / public, server CPU per request', cpuRatio, '≥', 0.95),
    goal('Routes: permission rule / `auth: true`, requests/s', permissionRatio, '≥', 0.95),
  ]
  const lines = [
    '### Routes: public vs protected',
    '',
    `autocannon, ${opts.connections} connections, ${opts.rounds} round(s) of ${opts.duration} s per route after a ${opts.warmup} s warm-up per route. Two server processes of the same build (memory driver), each with ${REVOKED_SESSIONS} sessions logged out before measuring: one with the revocation check (the default), one with \`sessions.revokeAccessTokens: false\`. In every round each server's public route is measured right before its protected route; ratios are the median of the per-round ratios, each protected route against the public route of its own process.`,
    '',
    '| Server | Route | Auth | req/s (mean of rounds) | Rounds req/s | server CPU per request | p50 latency | p99 latency |',
    '| --- | --- | --- | ---: | --- | ---: | ---: | ---: |',
  ]
  const rows = [
    ['revocation on', 'public', '/api/public/hello', 'none (`auth: false`)'],
    ['revocation on', 'protected', '/api/protected/hello', 'Bearer JWT (`auth: true`), revocation check'],
    ['revocation off', 'statelessPublic', '/api/public/hello', 'none (`auth: false`)'],
    ['revocation off', 'stateless', '/api/protected/hello', 'Bearer JWT (`auth: true`)'],
    ['organizations', 'orgProtected', '/api/protected/hello', 'Bearer JWT with `org`, `orgRole` (`auth: true`), revocation check'],
    ['organizations', 'permission', '/api/project/hello', 'the same JWT (`auth: { permission: \'project:write\' }`), revocation check'],
  ]
  for (const [server, name, path, auth] of rows) {
    const rs = routes[name]
    lines.push(`| ${server} | \`GET ${path}\` | ${auth} | ${fmtInt(rps(name))} | ${rs.map(r => fmtInt(r.reqPerSec)).join(' / ')} | ${cpu(name).toFixed(1)} µs | ${fmtMs(avg(rs.map(r => r.p50)))} ms | ${fmtMs(avg(rs.map(r => r.p99)))} ms |`)
  }
  lines.push(
    '',
    `Ratio protected / public with the revocation check (${REVOKED_SESSIONS} revoked sessions in the set): **${ratio.toFixed(3)}** in requests/s (target ≥ 0.95: ${status(goals[0].met)}); **${cpuRatio.toFixed(3)}** in server CPU per request (public / protected: the throughput ratio of a server that has the machine to itself; target ≥ 0.95: ${status(goals[1].met)}).`,
    `Without the revocation check: **${statelessRatio.toFixed(3)}** in requests/s, **${statelessCpuRatio.toFixed(3)}** in server CPU per request. What the check costs (ratio with / ratio without): **${(ratio / statelessRatio).toFixed(3)}** in requests/s, **${(cpuRatio / statelessCpuRatio).toFixed(3)}** in server CPU per request.`,
    `A permission rule against \`auth: true\` on the organizations server (test/fixtures/org-access, the same token with \`org\` and \`orgRole\`, each round measuring \`auth: true\` right before the permission route): **${permissionRatio.toFixed(3)}** in requests/s (target ≥ 0.95: ${status(goals[2].met)}); **${permissionCpuRatio.toFixed(3)}** in server CPU per request.`,
  )
  return { lines, goals }
}
