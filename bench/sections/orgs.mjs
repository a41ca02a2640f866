// Organizations on Redis. The route: `GET /auth/orgs` of a built server (test/fixtures/org-access
// with the organizations in the module's store on the run's Redis) for a user who is a member of
// 1,000 organizations, created through `POST /auth/orgs`; sequential requests over one keep-alive
// connection, latency as the client sees it, and the server's CPU per request. The store adapter
// (TypeScript through jiti, no server): the same list without HTTP, and one member and every
// member of an organization of 1,000 members. Sealed records, as with encryption on.

import { Agent } from 'node:http'
import { createJiti } from 'jiti'
import { ORG_ACCESS, redisEnv } from '../lib/fixtures.mjs'
import { httpRequest, login } from '../lib/http.mjs'
import { cpuSecondsOf, log, startServer, stopServer } from '../lib/processes.mjs'
import { REDIS, uniquePrefix } from '../lib/redis.mjs'
import { fmtInt, fmtMs, goal, percentile, status } from '../lib/stats.mjs'

const ORGANIZATIONS = 1000
const MEMBERS = 1000
/** Writes in flight while filling the store through the adapter. */
const FILL_CONCURRENCY = 32
/** Untimed requests or calls before the timed ones. */
const WARMUP = 20
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

/** `runs` timed calls of `fn` after {@link WARMUP} untimed ones: `{ p50, p95, p99, max, runs }` in ms. */
async function timed(runs, fn) {
  for (let i = 0; i < WARMUP; i++) await fn()
  const times = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    await fn()
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  return { p50: percentile(times, 0.5), p95: percentile(times, 0.95), p99: percentile(times, 0.99), max: times.at(-1), runs }
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

/** `GET /auth/orgs` of a built server on Redis for a member of {@link ORGANIZATIONS} organizations. */
async function measureRoute(runs) {
  const { prefix, release } = uniquePrefix('orgs-route')
  const server = await startServer(ORG_ACCESS.entry, {
    ...redisEnv(prefix),
    FIXTURE_ORGS_IN_STORE: '1',
    NUXT_SVC_AUTH_ORGANIZATIONS_MAX_ORGANIZATIONS_PER_USER: '0',
    NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false',
  })
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  try {
    log(`organizations: server pid ${server.pid}; creating ${fmtInt(ORGANIZATIONS)} organizations through POST /auth/orgs`)
    const { token } = await login(agent, server.port, BENCH_USER)
    const headers = { authorization: `Bearer ${token}` }
    const seedStarted = performance.now()
    for (let i = 0; i < ORGANIZATIONS; i++) {
      const res = await httpRequest(agent, server.port, 'POST', '/auth/orgs', { body: { name: `Organization ${String(ORGANIZATIONS - i).padStart(4, '0')}` }, headers })
      if (res.status !== 201) throw new Error(`POST /auth/orgs answered ${res.status}: ${res.text.slice(0, 300)}`)
    }
    const seedSeconds = (performance.now() - seedStarted) / 1000

    let answer
    const cpuBefore = cpuSecondsOf(server.pid)
    const list = await timed(runs, async () => {
      answer = await httpRequest(agent, server.port, 'GET', '/auth/orgs', { headers })
      if (answer.status !== 200) throw new Error(`GET /auth/orgs answered ${answer.status}: ${answer.text.slice(0, 300)}`)
    })
    const cpuMsPerRequest = ((cpuSecondsOf(server.pid) - cpuBefore) * 1000) / (runs + WARMUP)
    checkList(answer.text, ORGANIZATIONS)
    return { list, seedSeconds, cpuMsPerRequest, bytes: Buffer.byteLength(answer.text) }
  }
  finally {
    agent.destroy()
    await stopServer(server)
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
  const route = await measureRoute(runs)
  const adapter = await measureAdapter(runs)
  const { list } = route
  const goals = [goal(`\`GET /auth/orgs\`, a member of ${fmtInt(ORGANIZATIONS)} organizations, on Redis, p95 (ms)`, list.p95, '≤', 20)]
  const row = (name, t) => `| ${name} | ${fmtMs(t.p50)} ms | ${fmtMs(t.p95)} ms | ${fmtMs(t.p99)} ms |`
  const lines = [
    '### Organizations on Redis',
    '',
    `\`GET /auth/orgs\` of one server process (test/fixtures/org-access built for production, organizations in the module's store on the run's Redis, sealed records) for a user who is a member of ${fmtInt(ORGANIZATIONS)} organizations, each created through \`POST /auth/orgs\` (${route.seedSeconds.toFixed(1)} s for all). ${fmtInt(runs)} sequential requests with the bearer token over one keep-alive connection after ${WARMUP} untimed ones; a latency is the time from sending the request to the last byte of the answer (${fmtInt(route.bytes)} B of JSON, checked: ${fmtInt(ORGANIZATIONS)} entries in order of name). Server CPU per request is the process's user + system time over all of them.`,
    '',
    '| Request | p50 | p95 | p99 | max | server CPU per request |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    `| \`GET /auth/orgs\`, a member of ${fmtInt(ORGANIZATIONS)} organizations | ${fmtMs(list.p50)} ms | ${fmtMs(list.p95)} ms | ${fmtMs(list.p99)} ms | ${fmtMs(list.max)} ms | ${fmtMs(route.cpuMsPerRequest)} ms |`,
    '',
    `p95 **${fmtMs(list.p95)} ms** (target ≤ 20 ms: ${status(goals[0].met)}).`,
    '',
    `The store adapter (\`createStoreOrganizations\`) alone on the same Redis, no server, filled directly: what the route's read costs (one map read, opened and checked), and a member's reads in an organization of ${fmtInt(MEMBERS)} members. ${fmtInt(runs)} timed calls each after ${WARMUP} untimed ones.`,
    '',
    '| Operation | p50 | p95 | p99 |',
    '| --- | ---: | ---: | ---: |',
    row(`\`listUserOrganizations\`, a member of ${fmtInt(ORGANIZATIONS)} organizations`, adapter.list),
    row(`\`getMember\` in an organization of ${fmtInt(MEMBERS)} members`, adapter.getMember),
    row(`\`listMembers\` of an organization of ${fmtInt(MEMBERS)} members`, adapter.listMembers),
  ]
  return { lines, goals }
}
