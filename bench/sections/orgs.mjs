// Organizations in the record store on the run's Redis (the store adapter, TypeScript through
// jiti, no server): listing the organizations of a user who is a member of 1,000 (what
// `GET /auth/orgs` reads, shaped and serialised as its answer), and reading one member and every
// member of an organization of 1,000 members. Sealed records, as with encryption on.

import { createJiti } from 'jiti'
import { log } from '../lib/processes.mjs'
import { REDIS, uniquePrefix } from '../lib/redis.mjs'
import { fmtInt, fmtMs, goal, percentile, status } from '../lib/stats.mjs'

const ORGANIZATIONS = 1000
const MEMBERS = 1000
/** Writes in flight while filling the store. */
const FILL_CONCURRENCY = 32

const jiti = createJiti(import.meta.url)
const load = path => jiti.import(new URL(`../../src/runtime/${path}`, import.meta.url).href)

/** `count` calls of `fn` at most `concurrency` at a time. */
async function fill(count, concurrency, fn) {
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) await fn(next++)
  }))
}

/** `runs` timed calls of `fn` after `warmup` untimed ones: `{ p50, p95, runs }` in ms. */
async function timed(runs, warmup, fn) {
  for (let i = 0; i < warmup; i++) await fn()
  const times = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    await fn()
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  return { p50: percentile(times, 0.5), p95: percentile(times, 0.95), runs }
}

/** Measures and reports the organizations section. */
export async function measure(opts) {
  const [{ createStoreBackend }, { createRecordStore }, { createKeyHasher, createSealer, randomToken }, { createStoreOrganizations }] = await Promise.all([
    load('server/lib/store/index.ts'),
    load('server/lib/store/record-store.ts'),
    load('server/lib/store/crypto.ts'),
    load('organizations/server/org-store.ts'),
  ])
  const { prefix, release } = uniquePrefix('orgs')
  const backend = await createStoreBackend({ driver: 'redis', url: `redis://${REDIS.host}:${REDIS.port}`, base: '', host: '', port: 0, password: '', db: 0 })
  const runs = opts.quick ? 100 : 500
  try {
    const store = createRecordStore(backend, prefix, [createKeyHasher('bench-orgs-secret-0123456789-abcdefghijkl')], createSealer('bench-orgs-seal-key-0123456789-abcdefghijk'))
    const adapter = createStoreOrganizations(store)
    const createdAt = new Date().toISOString()
    const member = (userId, role) => ({ userId, role, email: `${userId}@example.test`, name: userId, teams: {}, joinedAt: createdAt })
    const organization = i => ({ id: `org_${randomToken(16)}`, name: `Organization ${i}`, slug: `bench-${i}-${randomToken(6).toLowerCase().replace(/[^a-z\d]/g, 'x')}`, createdAt })

    log(`organizations: ${fmtInt(ORGANIZATIONS)} organizations of one user on Redis`)
    await fill(ORGANIZATIONS, FILL_CONCURRENCY, async (i) => {
      if (await adapter.createOrganization(organization(i), member('bench-user', i % 2 ? 'admin' : 'owner')) !== 'created') throw new Error('createOrganization did not answer created')
    })
    let listed = 0
    const list = await timed(runs, 20, async () => {
      const organizations = await adapter.listUserOrganizations('bench-user')
      listed = organizations.length
      JSON.stringify({ organizations: organizations.map(({ organization, role }) => ({ id: organization.id, name: organization.name, slug: organization.slug, role })) })
    })
    if (listed !== ORGANIZATIONS) throw new Error(`listed ${listed} organizations, expected ${ORGANIZATIONS}`)

    log(`organizations: one organization of ${fmtInt(MEMBERS)} members`)
    const big = organization('big')
    await adapter.createOrganization(big, member('member-0', 'owner'))
    await fill(MEMBERS - 1, FILL_CONCURRENCY, i => adapter.saveMember(big.id, member(`member-${i + 1}`, 'member')))
    const getMember = await timed(runs, 20, async () => {
      if (!await adapter.getMember(big.id, `member-${MEMBERS - 1}`)) throw new Error('member not found')
    })
    const listMembers = await timed(runs, 20, async () => {
      if ((await adapter.listMembers(big.id)).length !== MEMBERS) throw new Error('members missing')
    })

    const goals = [goal(`Listing a user's ${fmtInt(ORGANIZATIONS)} organizations on Redis (store adapter), p95 (ms)`, list.p95, '≤', 20)]
    const lines = [
      '### Organizations in the store',
      '',
      `The store adapter (\`createStoreOrganizations\`) on the run's Redis, sealed records, no HTTP: a user's list is one map read (the organizations are copied into it), shaped and serialised as the answer of \`GET /auth/orgs\`; a member is read from the organization's members map. ${runs} timed runs each after 20 untimed ones.`,
      '',
      '| Operation | p50 | p95 |',
      '| --- | ---: | ---: |',
      `| \`listUserOrganizations\`, a member of ${fmtInt(ORGANIZATIONS)} organizations | ${fmtMs(list.p50)} ms | ${fmtMs(list.p95)} ms |`,
      `| \`getMember\` in an organization of ${fmtInt(MEMBERS)} members | ${fmtMs(getMember.p50)} ms | ${fmtMs(getMember.p95)} ms |`,
      `| \`listMembers\` of an organization of ${fmtInt(MEMBERS)} members | ${fmtMs(listMembers.p50)} ms | ${fmtMs(listMembers.p95)} ms |`,
      '',
      `A user's ${fmtInt(ORGANIZATIONS)} organizations: p95 **${fmtMs(list.p95)} ms** (target ≤ 20 ms for \`GET /auth/orgs\`, which adds its HTTP round trip: ${status(goals[0].met)}).`,
    ]
    return { lines, goals }
  }
  finally {
    await backend.dispose()
    await release()
  }
}
