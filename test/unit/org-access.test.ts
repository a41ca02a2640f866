import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createApp, defineEventHandler, getQuery, toNodeListener, type H3Event } from 'h3'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { resolveOptions } from '../../src/build/resolve-options'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { issueRefreshToken } from '../../src/runtime/server/lib/core/records/refresh-token'
import { mintSessionToken } from '../../src/runtime/server/lib/core/session-tokens'
import { markClaimsStale } from '../../src/runtime/server/lib/core/stale-claims'
import { useAuthContext } from '../../src/runtime/server/utils/auth-context'
import middleware from '../../src/runtime/server/middleware/route-protection'
import { hasPermission, requirePermission } from '../../src/runtime/organizations/server/utils/require-permission'
import { createAccessCheck } from '../../src/runtime/shared/access-check'
import type { AuthClaims } from '../../src/runtime/types/auth'
import { CookieJar } from '../helpers/cookie-jar'
import { moduleRouter } from './helpers/module-router'
import { memoryOrganizations, orgId } from './helpers/memory-organizations'

// Organizations' enforcement through the real middleware and routes on a plain h3 app: the route rules, the
// active organization's claims, POST orgs/active, stale tokens and the server utils.
const nitro = vi.hoisted(() => ({ options: undefined as unknown, rules: {} as Record<string, unknown> }))
vi.mock('nitropack/runtime', () => ({
  useRuntimeConfig: () => ({ svcAuth: nitro.options }),
  useNitroApp: () => ({ hooks: { callHook: async () => {} } }),
  getRouteRules: (event: H3Event) => ({ auth: nitro.rules[event.path.split('?')[0]!] }),
}))

const ROLES = {
  owner: ['*'],
  admin: ['org:read', 'org:update', 'member:*', 'project:*'],
  member: ['org:read', 'project:read'],
  editor: ['doc:edit'],
}
const options = resolveOptions({
  token: { secret: 'org-access-secret-0123456789-abcdefghijk' },
  tokenRefresh: { storage: { driver: 'memory' } },
  logging: { level: 'silent' },
  organizations: { roles: ROLES },
}, false)
nitro.options = options
nitro.rules = {
  '/api/hello': true,
  '/api/project': { permission: 'project:write' },
  '/api/admin': { role: 'admin' },
  '/api/staff': { role: ['admin', 'owner'] },
  '/api/both': { permission: 'project:write', role: 'owner' },
}

const ACME = orgId('acme')
const GLOBEX = orgId('globex')
const TEAM = `team_${'a'.repeat(22)}`
let orgs = memoryOrganizations()
let server: Server
let base = ''

/** What a test route answers: the caller's claims of the organization. */
const whoami = defineEventHandler((event) => {
  const user = event.context.user
  return { sub: user?.sub, org: user?.org ?? null, orgRole: user?.orgRole ?? null }
})

beforeAll(async () => {
  const router = await moduleRouter(options)
  for (const path of Object.keys(nitro.rules)) router.get(path, whoami)
  router.get('/api/doc', defineEventHandler(async (event) => {
    const { team, org } = getQuery(event) as { team?: string, org?: string }
    // The document is Acme's (the host's data says so), unless the test names another organization.
    const user = await requirePermission(event, 'doc:edit', { resource: { id: 'd1', teamId: team }, organization: org ?? ACME })
    return { sub: user.sub }
  }))
  router.get('/api/can', defineEventHandler(async (event) => {
    const { perm, org, doc } = getQuery(event) as { perm: string, org?: string, doc?: string }
    return { allowed: await hasPermission(event, perm, doc ? { organization: org ?? ACME, resource: { id: doc } } : { organization: org }) }
  }))
  const app = createApp()
  app.use(middleware)
  app.use(router)
  server = createServer(toNodeListener(app))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise(resolve => server.close(resolve))
  await (await useAuthContext()).dispose()
})

afterEach(() => {
  resetAuthHandlers()
})

/** A fresh host adapter, registered (and the host's other handlers, if given). */
function host(extra: Parameters<typeof defineAuthHandlers>[0] = {}) {
  orgs = memoryOrganizations()
  defineAuthHandlers({ ...extra, organizations: { ...extra.organizations, adapter: orgs.adapter } })
  return orgs
}

interface Answer { status: number, body: Record<string, unknown> }

/** A browser of `userId`, logged in (a stored session, its refresh cookie in the jar and an access token). */
async function browserOf(userId: string, claims: Record<string, string> = {}) {
  const jar = new CookieJar()
  const ctx = await useAuthContext()
  const { token: cookie, record } = await issueRefreshToken(ctx, { user: { sub: userId, email: `${userId}@example.com` }, userId, claims })
  jar.set(options.tokenRefresh.cookie.cookieName, cookie)
  const send = async (method: string, path: string, body?: unknown, bearer: string | null = b.token): Promise<Answer> => {
    const headers: Record<string, string> = { cookie: jar.header(), accept: 'application/json' }
    if (bearer) headers.authorization = `Bearer ${bearer}`
    if (body !== undefined) headers['content-type'] = 'application/json'
    const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
    jar.store(res)
    return { status: res.status, body: await res.json() as Record<string, unknown> }
  }
  const b = {
    token: '',
    record,
    jar,
    get: (path: string, bearer?: string | null) => send('GET', path, undefined, bearer),
    post: (path: string, body?: unknown, bearer?: string | null) => send('POST', path, body ?? {}, bearer),
    /** POST /auth/refresh: keeps and returns the new token. */
    async refresh(): Promise<string> {
      const answer = await send('POST', options.endpoints.refreshPath, {}, null)
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      b.token = answer.body.accessToken as string
      return b.token
    },
    /** POST orgs/active: the answer, its token kept on success. */
    async activate(id: string | null): Promise<Answer> {
      const answer = await send('POST', `${options.endpoints.authPath}/orgs/active`, { orgId: id })
      if (answer.status === 200) b.token = answer.body.accessToken as string
      return answer
    },
    claims: (): AuthClaims => JSON.parse(Buffer.from(b.token.split('.')[1]!, 'base64url').toString()) as AuthClaims,
  }
  await b.refresh()
  return b
}

/** The error code of a module answer (`error`) or of an h3 error thrown by a host route (`data.code`). */
const codeOf = (answer: Answer) => answer.body.error ?? (answer.body.data as { code?: string } | undefined)?.code

describe('the active organization in the session\'s tokens', () => {
  it('POST orgs/active answers a token with org and orgRole, and every refresh of the session keeps them', async () => {
    const { join } = host()
    await join(ACME, 'alice', 'admin')
    const alice = await browserOf('alice')
    expect(alice.claims().org).toBeUndefined()
    const answer = await alice.activate(ACME)
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ tokenType: 'Bearer', expiresIn: expect.any(Number) })
    expect(alice.claims()).toMatchObject({ sub: 'alice', org: ACME, orgRole: 'admin', sid: alice.record.family })
    await alice.refresh()
    expect(alice.claims()).toMatchObject({ org: ACME, orgRole: 'admin' })
    // Another session of the same user has its own choice.
    const elsewhere = await browserOf('alice')
    expect(elsewhere.claims().org).toBeUndefined()
    // null: no organization any more.
    expect((await alice.activate(null)).status).toBe(200)
    expect(alice.claims().org).toBeUndefined()
    await alice.refresh()
    expect(alice.claims().org).toBeUndefined()
  })

  it('a refresh costs one read of the active organization and one getMember', async () => {
    const { join, adapter } = host()
    await join(ACME, 'alice', 'member')
    const alice = await browserOf('alice')
    await alice.activate(ACME)
    const ctx = await useAuthContext()
    const getMember = vi.spyOn(adapter, 'getMember')
    const read = vi.spyOn(ctx.store, 'read')
    await alice.refresh()
    expect(getMember).toHaveBeenCalledOnce()
    expect(read.mock.calls.filter(([key]) => key.current.includes('org-active:'))).toHaveLength(1)
    vi.restoreAllMocks()
  })

  it('a member who left, or was removed, gets no organization claims', async () => {
    const { join, adapter } = host()
    await join(ACME, 'bob', 'admin')
    const bob = await browserOf('bob')
    await bob.activate(ACME)
    await adapter.removeMember(ACME, 'bob')
    await bob.refresh()
    expect(bob.claims().org).toBeUndefined()
    expect(bob.claims().orgRole).toBeUndefined()
  })

  it('custom claims named org or orgRole never reach a token: the host cannot forge them; its role claim is untouched', async () => {
    host({ customClaims: () => ({ org: GLOBEX, orgRole: 'owner', role: 'staff' }) })
    const mallory = await browserOf('mallory', { org: GLOBEX, orgRole: 'owner' })
    expect(mallory.claims()).toMatchObject({ role: 'staff' })
    expect(mallory.claims().org).toBeUndefined()
    expect(mallory.claims().orgRole).toBeUndefined()
    expect((await mallory.get('/api/project')).status).toBe(403)
  })

  it('an impersonated session is minted without organization claims', async () => {
    const { join } = host()
    await join(ACME, 'carol', 'owner')
    const ctx = await useAuthContext()
    const carol = await browserOf('carol')
    await carol.activate(ACME)
    const impersonation = { originalUserSub: 'admin', originalUserLookupId: 'admin', impersonatedAt: new Date().toISOString() }
    const { payload } = await mintSessionToken(ctx, { ...carol.record, impersonation }, { org: ACME, orgRole: 'owner' })
    expect(payload.org).toBeUndefined()
    expect(payload.orgRole).toBeUndefined()
    expect(payload.impersonation).toMatchObject({ originalUserSub: 'admin' })
  })
})

describe('POST orgs/active refusals', () => {
  it('404 for an organization the caller is not a member of, and for a malformed id (isolation)', async () => {
    const { join } = host()
    await join(GLOBEX, 'someone-else', 'owner')
    const dave = await browserOf('dave')
    for (const id of [GLOBEX, orgId('nowhere'), 'org_short', '../../etc', 'x'.repeat(64)]) {
      const answer = await dave.activate(id)
      expect(answer.status, id).toBe(404)
      expect(codeOf(answer), id).toBe('not_found')
    }
    const tooLong = await dave.activate('x'.repeat(65))
    expect(tooLong.status).toBe(400)
  })

  it('401 without a bearer, and when the refresh cookie is missing or of another session', async () => {
    const { join } = host()
    await join(ACME, 'erin', 'member')
    const erin = await browserOf('erin')
    const path = `${options.endpoints.authPath}/orgs/active`
    expect(codeOf(await erin.post(path, { orgId: ACME }, null))).toBe('unauthorized')
    const other = await browserOf('erin')
    const mixed = await erin.post(path, { orgId: ACME }, other.token)
    expect(mixed.status).toBe(401)
    expect(codeOf(mixed)).toBe('invalid_refresh_token')
    erin.jar.clear()
    expect(codeOf(await erin.post(path, { orgId: ACME }))).toBe('invalid_refresh_token')
  })
})

describe('route rules: auth: { permission } and auth: { role }', () => {
  it('401 without a valid bearer, 403 permission_denied with no organization active', async () => {
    host()
    const frank = await browserOf('frank')
    for (const path of ['/api/project', '/api/admin', '/api/staff']) {
      const anonymous = await frank.get(path, null)
      expect(anonymous.status, path).toBe(401)
      const noOrg = await frank.get(path)
      expect(noOrg.status, path).toBe(403)
      expect(codeOf(noOrg), path).toBe('permission_denied')
    }
    expect((await frank.get('/api/hello')).status).toBe(200)
  })

  it('the role of the active organization decides: a permission it grants, one of the roles named', async () => {
    const { join } = host()
    await join(ACME, 'grace', 'member')
    await join(GLOBEX, 'grace', 'admin')
    const grace = await browserOf('grace')
    await grace.activate(ACME)
    const asMember = await Promise.all(['/api/project', '/api/admin', '/api/staff', '/api/both'].map(path => grace.get(path)))
    expect(asMember.map(a => a.status)).toEqual([403, 403, 403, 403])
    await grace.activate(GLOBEX)
    const asAdmin = await Promise.all(['/api/project', '/api/admin', '/api/staff', '/api/both'].map(path => grace.get(path)))
    expect(asAdmin.map(a => a.status)).toEqual([200, 200, 200, 403])
    expect(asAdmin[0]!.body).toEqual({ sub: 'grace', org: GLOBEX, orgRole: 'admin' })
  })

  it('a role change or a removal is in force at once: the old token answers 401 session_stale, a refresh gets the new role', async () => {
    const { join, adapter } = host()
    await join(ACME, 'heidi', 'admin')
    const heidi = await browserOf('heidi')
    await heidi.activate(ACME)
    const stale = heidi.token
    expect((await heidi.get('/api/project')).status).toBe(200)
    await join(ACME, 'heidi', 'member')
    await markClaimsStale(await useAuthContext(), 'heidi')
    const refused = await heidi.get('/api/project', stale)
    expect(refused.status).toBe(401)
    expect(codeOf(refused)).toBe('session_stale')
    await heidi.refresh()
    expect(heidi.claims().orgRole).toBe('member')
    expect((await heidi.get('/api/project')).status).toBe(403)
    expect((await heidi.get('/api/hello')).status).toBe(200)
    await adapter.removeMember(ACME, 'heidi')
    await markClaimsStale(await useAuthContext(), 'heidi')
    expect(codeOf(await heidi.get('/api/hello'))).toBe('session_stale')
    await heidi.refresh()
    expect(heidi.claims().org).toBeUndefined()
  })

  it('compiles a rule once per value: equal values share the compiled roles, by identity or by text', () => {
    const table: Record<string, string[]> = { admin: ['project:*'], member: [] }
    const check = createAccessCheck(table)
    const rule = { permission: 'project:write' }
    expect(check(rule, 'admin')).toBe(true)
    // A later change of the table is not seen: the rule was compiled already (an equal object too).
    table.member = ['project:write']
    expect(check(rule, 'member')).toBe(false)
    expect(check({ permission: 'project:write' }, 'member')).toBe(false)
    expect(check({ permission: 'project:read' }, 'member')).toBe(false)
    expect(check({ role: ['member', 'admin'] }, 'member')).toBe(true)
    // Malformed values are met by nobody.
    for (const bad of [{}, { permission: 3 }, { role: [1] }]) expect(check(bad, 'admin')).toBe(false)
    expect(check(rule, undefined)).toBe(false)
  })
})

describe('requirePermission and hasPermission', () => {
  it('the member\'s role, its team role for the resource\'s team, and the host\'s resolveRoles', async () => {
    const resolveRoles = vi.fn(({ resource }: { resource: unknown }) => ((resource as { id?: string } | undefined)?.id === 'shared-doc' ? ['editor'] : undefined))
    const { join } = host({ organizations: { resolveRoles } })
    await join(ACME, 'ivan', 'member', { [TEAM]: 'editor' })
    const ivan = await browserOf('ivan')
    await ivan.activate(ACME)
    expect((await ivan.get('/api/doc')).status).toBe(403)
    expect(codeOf(await ivan.get('/api/doc'))).toBe('permission_denied')
    expect(await ivan.get(`/api/doc?team=${TEAM}`)).toMatchObject({ status: 200, body: { sub: 'ivan' } })
    expect((await ivan.get(`/api/doc?team=team_${'b'.repeat(22)}`)).status).toBe(403)
    expect((await ivan.get('/api/can?perm=doc:edit&doc=shared-doc')).body).toEqual({ allowed: true })
    expect((await ivan.get('/api/can?perm=doc:edit&doc=other')).body).toEqual({ allowed: false })
    expect(resolveRoles).toHaveBeenCalledWith(expect.objectContaining({ organization: ACME, resource: { id: 'shared-doc' }, user: expect.objectContaining({ sub: 'ivan' }) }))
    expect((await ivan.get('/api/can?perm=project:read')).body).toEqual({ allowed: true })
    expect((await ivan.get('/api/can?perm=project:write')).body).toEqual({ allowed: false })
  })

  it('in another organization by its id (a lookup of the membership); never for a non-member or without a token', async () => {
    const { join } = host()
    await join(ACME, 'judy', 'member')
    await join(GLOBEX, 'judy', 'owner')
    const judy = await browserOf('judy')
    await judy.activate(ACME)
    expect((await judy.get('/api/can?perm=org:delete')).body).toEqual({ allowed: false })
    expect((await judy.get(`/api/can?perm=org:delete&org=${GLOBEX}`)).body).toEqual({ allowed: true })
    expect((await judy.get(`/api/can?perm=org:read&org=${orgId('nowhere')}`)).body).toEqual({ allowed: false })
    expect((await judy.get('/api/can?perm=org:read&org=not-an-id')).body).toEqual({ allowed: false })
    expect((await judy.get('/api/can?perm=org:read', null)).body).toEqual({ allowed: false })
    const anonymous = await judy.get('/api/doc', null)
    expect(anonymous.status).toBe(401)
    const noOrg = await browserOf('judy')
    expect((await noOrg.get('/api/can?perm=org:read')).body).toEqual({ allowed: false })
  })
})
