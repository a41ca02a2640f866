// Organizations on Redis. The route: `GET /auth/orgs` of a built server (test/fixtures/org-access
// with the organizations in the module's store on the run's Redis) for a user who is a member of
// 1,000 organizations, created through `POST /auth/orgs`; sequential requests over one keep-alive
// connection, latency as the client sees it, and the server's CPU per request; with `--baseline`,
// a server of the baseline's build on the same store in alternating blocks; with `--profile`, the
// server's CPU profile over the requests. The store adapter (TypeScript through jiti, no server):
// the same list without HTTP, and one member and every member of an organization of 1,000
// members. Sealed records, as with encryption on.

import { readdirSync } from 'node:fs'
import { Agent } from 'node:http'
import { join } from 'node:path'
import { createJiti } from 'jiti'
import { buildBaseline } from '../lib/baseline.mjs'
import { ORG_ACCESS, redisEnv } from '../lib/fixtures.mjs'
import { httpRequest, login } from '../lib/http.mjs'
import { profileTables, summarizeProfile } from '../lib/profile.mjs'
import { cpuSecondsOf, log, startServer, stopServer, tempDir } from '../lib/processes.mjs'
import { REDIS, uniquePrefix } from '../lib/redis.mjs'
import { fmtInt, fmtMs, goal, percentile, status } from '../lib/stats.mjs'

const ORGANIZATIONS = 1000
const MEMBERS = 1000
/** Writes in flight while filling the store through the adapter. */
const FILL_CONCURRENCY = 32
/** Untimed requests or calls before the timed ones. */
const WARMUP = 20
/** Blocks of the timed requests, alternating between the servers of this build and of the baseline. */
const BLOCKS = 10
const BENCH_USER = 'bench-orgs-user'

const jiti = createJiti(import.meta.url)
const load = path => jiti.import(new URL(`../../src/runtime/${path}`, import.meta.url).href)

/** `count` calls of `fn` at most `concurrency` at a time. */
async function fill(count, concurrency, fn) {
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) await fn(next++)
  }))
}

/** p50, p95, p99 and max of a list of times in ms (sorted in place). */
function summary(times) {
  times.sort((a, b) => a - b)
  return { p50: percentile(times, 0.5), p95: percentile(times, 0.95), p99: percentile(times, 0.99), max: times.at(-1), runs: times.length }
}

/** `runs` timed calls of `fn` after {@link WARMUP} untimed ones: {@link summary} of their times. */
async function timed(runs, fn) {
  for (let i = 0; i < WARMUP; i++) await fn()
  const times = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    await fn()
    times.push(performance.now() - started)
  }
  return summary(times)
}

/** Throws unless `text` is the answer of `GET /auth/orgs` listing `count` organizations of their creator in order of name. */
function checkList(text, count) {
  const { organizations } = JSON.parse(text)
  if (!Array.isArray(organizations) || organizations.length !== count) throw new Error(`GET /auth/orgs listed ${organizations?.length} organizations, expected ${count}`)
  for (let i = 1; i < organizations.length; i++) {
    if (organizations[i - 1].name.localeCompare(organizations[i].name) > 0) throw new Error(`GET /auth/orgs is not in order of name at ${i}`)
  }
  if (organizations.some(o => !o.id || !o.slug || o.role !== 'owner')) throw new Error('GET /auth/orgs answered an entry without id or slug, or not as its owner')
}

/** Starts a server of `entry` (an org-access build) with its organizations in the store on the run's Redis under `prefix`. */
const startOrgServer = (entry, prefix, nodeArgs = []) => startServer(entry, {
  ...redisEnv(prefix),
  FIXTURE_ORGS_IN_STORE: '1',
  NUXT_SVC_AUTH_ORGANIZATIONS_MAX_ORGANIZATIONS_PER_USER: '0',
  NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false',
}, undefined, nodeArgs)

/**
 * `runs` timed `GET /auth/orgs` of each server (after {@link WARMUP} untimed ones each), in
 * {@link BLOCKS} blocks that alternate between the servers (the first one by turns), so that a load
 * that comes and goes falls on each alike. Per server: the {@link summary} of its times, its CPU
 * per timed request in ms. Every answer must be a 200; each server's list is checked, and must be the same as the others'.
 */
async function timeLists(agent, servers, headers, runs) {
  let answer
  const get = async (server) => {
    answer = await httpRequest(agent, server.port, 'GET', '/auth/orgs', { headers })
    if (answer.status !== 200) throw new Error(`GET /auth/orgs answered ${answer.status}: ${answer.text.slice(0, 300)}`)
  }
  const answers = []
  for (const server of servers) {
    for (let i = 0; i < WARMUP; i++) await get(server)
    checkList(answer.text, ORGANIZATIONS)
    answers.push(answer.text)
  }
  // Builds compared on one store must answer alike, byte for byte.
  if (answers.some(text => text !== answers[0])) throw new Error('GET /auth/orgs answered differently on the baseline build')
  const times = servers.map(() => [])
  const cpu = servers.map(server => -cpuSecondsOf(server.pid))
  const block = Math.ceil(runs / BLOCKS)
  for (let done = 0, b = 0; done < runs; done += block, b++) {
    const order = servers.map((_, i) => i)
    if (b % 2) order.reverse()
    for (const i of order) {
      for (let k = 0; k < Math.min(block, runs - done); k++) {
        const started = performance.now()
        await get(servers[i])
        times[i].push(performance.now() - started)
      }
    }
  }
  return servers.map((server, i) => {
    cpu[i] += cpuSecondsOf(server.pid)
    return { list: summary(times[i]), cpuMsPerRequest: (cpu[i] * 1000) / runs }
  })
}

/**
 * `GET /auth/orgs` on Redis for a member of {@link ORGANIZATIONS} organizations, created through
 * `POST /auth/orgs` of this build's server: `{ current, baseline?, seedSeconds, bytes, profile? }`.
 * With `baseline` (`{ entry }`, a build of an earlier revision), a server of that build on the same
 * store answers too, in alternating blocks; with `profile`, the requests run again on another
 * process of this build under `node --cpu-prof` (its self-time summary over them).
 */
async function measureRoute(runs, { baseline, profile }) {
  const { prefix, release } = uniquePrefix('orgs-route')
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const servers = []
  try {
    servers.push(await startOrgServer(ORG_ACCESS.entry, prefix))
    if (baseline) servers.push(await startOrgServer(baseline.entry, prefix))
    log(`organizations: server pid ${servers.map(s => s.pid).join(', pid ')}; creating ${fmtInt(ORGANIZATIONS)} organizations through POST /auth/orgs`)
    const { token } = await login(agent, servers[0].port, BENCH_USER)
    const headers = { authorization: `Bearer ${token}` }
    const seedStarted = performance.now()
    for (let i = 0; i < ORGANIZATIONS; i++) {
      const res = await httpRequest(agent, servers[0].port, 'POST', '/auth/orgs', { body: { name: `Organization ${String(ORGANIZATIONS - i).padStart(4, '0')}` }, headers })
      if (res.status !== 201) throw new Error(`POST /auth/orgs answered ${res.status}: ${res.text.slice(0, 300)}`)
    }
    const seedSeconds = (performance.now() - seedStarted) / 1000
    log(`organizations: ${fmtInt(runs)} × GET /auth/orgs${baseline ? ' on each build' : ''}`)
    const [current, before] = await timeLists(agent, servers, headers, runs)
    const bytes = Buffer.byteLength((await httpRequest(agent, servers[0].port, 'GET', '/auth/orgs', { headers })).text)
    await Promise.all(servers.splice(0).map(stopServer))
    if (!profile) return { current, baseline: before, seedSeconds, bytes }

    const dir = tempDir('svc-auth-bench-orgs-prof-')
    const profiled = await startOrgServer(ORG_ACCESS.entry, prefix, ['--cpu-prof', `--cpu-prof-dir=${dir}`])
    servers.push(profiled)
    const hr = () => Number(process.hrtime.bigint() / 1000n)
    log(`organizations: ${fmtInt(runs)} × GET /auth/orgs under --cpu-prof (pid ${profiled.pid})`)
    const from = hr()
    const [whileProfiled] = await timeLists(agent, [profiled], headers, runs)
    const to = hr()
    await stopServer(servers.pop())
    const files = readdirSync(dir).filter(name => name.endsWith('.cpuprofile'))
    if (files.length !== 1) throw new Error(`Expected one .cpuprofile of the server in ${dir}, found ${files.length}`)
    const summarized = summarizeProfile(join(dir, files[0]), { root: ORG_ACCESS.dir, spans: [{ from, to }] })
    return { current, baseline: before, seedSeconds, bytes, profile: { ...whileProfiled, summary: summarized } }
  }
  finally {
    agent.destroy()
    await Promise.all(servers.map(stopServer))
    await release()
  }
}

/** The store adapter alone on the run's Redis: a user's list, one member, every member. */
async function measureAdapter(runs) {
  const [{ createStoreBackend }, { createRecordStore }, { createKeyHasher, createSealer, randomToken }, { createStoreOrganizations }] = await Promise.all([
    load('server/lib/store/index.ts'),
    load('server/lib/store/record-store.ts'),
    load('server/lib/store/crypto.ts'),
    load('organizations/server/org-store.ts'),
  ])
  const { prefix, release } = uniquePrefix('orgs')
  const backend = await createStoreBackend({ driver: 'redis', url: `redis://${REDIS.host}:${REDIS.port}`, base: '', host: '', port: 0, password: '', db: 0 })
  try {
    const store = createRecordStore(backend, prefix, [createKeyHasher('bench-orgs-secret-0123456789-abcdefghijkl')], createSealer('bench-orgs-seal-key-0123456789-abcdefghijk'))
    const adapter = createStoreOrganizations(store)
    const createdAt = new Date().toISOString()
    const member = (userId, role) => ({ userId, role, email: `${userId}@example.test`, name: userId, teams: {}, joinedAt: createdAt })
    const organization = i => ({ id: `org_${randomToken(16)}`, name: `Organization ${i}`, slug: `bench-${i}-${randomToken(6).toLowerCase().replace(/[^a-z\d]/g, 'x')}`, createdAt })

    log(`organizations: ${fmtInt(ORGANIZATIONS)} organizations of one user through the store adapter`)
    await fill(ORGANIZATIONS, FILL_CONCURRENCY, async (i) => {
      if (await adapter.createOrganization(organization(i), member('bench-user', i % 2 ? 'admin' : 'owner')) !== 'created') throw new Error('createOrganization did not answer created')
    })
    let listed = 0
    const list = await timed(runs, async () => {
      listed = (await adapter.listUserOrganizations('bench-user')).length
    })
    if (listed !== ORGANIZATIONS) throw new Error(`listed ${listed} organizations, expected ${ORGANIZATIONS}`)

    log(`organizations: one organization of ${fmtInt(MEMBERS)} members`)
    const big = organization('big')
    await adapter.createOrganization(big, member('member-0', 'owner'))
    await fill(MEMBERS - 1, FILL_CONCURRENCY, i => adapter.saveMember(big.id, member(`member-${i + 1}`, 'member')))
    const getMember = await timed(runs, async () => {
      if (!await adapter.getMember(big.id, `member-${MEMBERS - 1}`)) throw new Error('member not found')
    })
    const listMembers = await timed(runs, async () => {
      if ((await adapter.listMembers(big.id)).length !== MEMBERS) throw new Error('members missing')
    })
    return { list, getMember, listMembers }
  }
  finally {
    await backend.dispose()
    await release()
  }
}

/** Measures and reports the organizations section. */
export async function measure(opts) {
  const runs = opts.quick ? 200 : 1000
  const baseline = opts.baseline ? await buildBaseline(opts.baseline, 'org-access') : undefined
  const route = await measureRoute(runs, { baseline, profile: opts.profile })
  const adapter = await measureAdapter(runs)
  const { current } = route
  const goals = [goal(`\`GET /auth/orgs\`, a member of ${fmtInt(ORGANIZATIONS)} organizations, on Redis, p95 (ms)`, current.list.p95, '≤', 20)]
  const requestRow = (name, { list, cpuMsPerRequest }) => `| ${name} | ${fmtMs(list.p50)} ms | ${fmtMs(list.p95)} ms | ${fmtMs(list.p99)} ms | ${fmtMs(list.max)} ms | ${fmtMs(cpuMsPerRequest)} ms |`
  const row = (name, t) => `| ${name} | ${fmtMs(t.p50)} ms | ${fmtMs(t.p95)} ms | ${fmtMs(t.p99)} ms |`
  const ratio = (of, a = route.baseline, b = current) => (of(a) / of(b)).toFixed(2)
  const lines = [
    '### Organizations on Redis',
    '',
    `\`GET /auth/orgs\` of a server process (test/fixtures/org-access built for production, organizations in the module's store on the run's Redis, sealed records) for a user who is a member of ${fmtInt(ORGANIZATIONS)} organizations, each created through \`POST /auth/orgs\` (${route.seedSeconds.toFixed(1)} s for all). ${fmtInt(runs)} sequential requests with the bearer token over one keep-alive connection after ${WARMUP} untimed ones; a latency is the time from sending the request to the last byte of the answer (${fmtInt(route.bytes)} B of JSON, checked: ${fmtInt(ORGANIZATIONS)} entries in order of name). Server CPU per request is the process's user + system time over the timed requests.${route.baseline ? ` A server of the baseline build (${opts.baseline}, ${baseline.commit.slice(0, 10)}) on the same store answers the same requests, in ${BLOCKS} blocks alternating with this build's.` : ''}`,
    '',
    '| Build | p50 | p95 | p99 | max | server CPU per request |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    requestRow('this build', current),
    ...(route.baseline ? [requestRow(`baseline (${opts.baseline})`, route.baseline)] : []),
    '',
    `p95 **${fmtMs(current.list.p95)} ms** (target ≤ 20 ms: ${status(goals[0].met)}).${route.baseline ? ` Baseline ÷ this build: p50 ${ratio(r => r.list.p50)}, p95 ${ratio(r => r.list.p95)}, server CPU per request ${ratio(r => r.cpuMsPerRequest)}.` : ''}`,
    '',
    `The store adapter (\`createStoreOrganizations\`, this build) alone on the same Redis, no server, filled directly: what the route's read costs (one map read, opened and checked), and a member's reads in an organization of ${fmtInt(MEMBERS)} members. ${fmtInt(runs)} timed calls each after ${WARMUP} untimed ones.`,
    '',
    '| Operation | p50 | p95 | p99 |',
    '| --- | ---: | ---: | ---: |',
    row(`\`listUserOrganizations\`, a member of ${fmtInt(ORGANIZATIONS)} organizations`, adapter.list),
    row(`\`getMember\` in an organization of ${fmtInt(MEMBERS)} members`, adapter.getMember),
    row(`\`listMembers\` of an organization of ${fmtInt(MEMBERS)} members`, adapter.listMembers),
  ]
  if (route.profile) {
    const { summary: profile, list } = route.profile
    lines.push(
      '',
      '#### Where the time of `GET /auth/orgs` goes (CPU profile)',
      '',
      `The same requests again on another server process of this build on the same store, under \`node --cpu-prof\` (p50 ${fmtMs(list.p50)} ms, p95 ${fmtMs(list.p95)} ms while profiled). Main thread on the CPU: **${fmtMs((profile.totalMs - profile.idleMs) / (runs + WARMUP))} ms per request** (the ${WARMUP} untimed ones included).`,
      '',
      ...profileTables(profile, 20, 'the requests'),
    )
  }
  return { lines, goals }
}
