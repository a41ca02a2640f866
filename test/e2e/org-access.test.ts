import { decodeJwt } from 'jose'
import { describe, expect, it, vi } from 'vitest'
import { setupApp } from './app'
import { startServerProcess } from './server-processes'
import { testRedisUrl } from '../support/test-redis'
import { deleteRedisKeys } from '../support/redis-servers'
import { bearer, json, login, setCookieValue, type Session } from './requests'

// Organizations' enforcement in a built app (test/fixtures/org-access): permission and role route
// rules, the active organization's claims, the auto-imported server utils, and a role change that
// makes the member's token stale.
const server = await setupApp('org-access')

const ACME = `org_${'acme'.padEnd(22, '0')}`
const GLOBEX = `org_${'globex'.padEnd(22, '0')}`

/** A logged-in user with the session's refresh cookie, switching organizations and refreshing as the browser would. */
async function userOf(sub: string) {
  const session: Session = await login(server, { sub, email: `${sub}@example.com` })
  let cookie = session.refreshCookie!
  let token = session.token
  const user = {
    get token(): string {
      return token
    },
    claims: () => decodeJwt(token),
    get: (path: string, as: string = token): Promise<Response> => server.fetch(path, bearer(as)),
    async activate(orgId: string | null): Promise<Response> {
      const res = await server.fetch('/auth/orgs/active', json({ orgId }, { authorization: `Bearer ${token}`, cookie: `svc-refresh=${cookie}` }))
      if (res.status === 200) token = (await res.json() as { accessToken: string }).accessToken
      return res
    },
    async refresh(): Promise<void> {
      const res = await server.fetch('/auth/refresh', { method: 'POST', headers: { cookie: `svc-refresh=${cookie}` } })
      expect(res.status).toBe(200)
      cookie = setCookieValue(res, 'svc-refresh') ?? cookie
      token = (await res.json() as { accessToken: string }).accessToken
    },
  }
  return user
}

const seed = (orgId: string, userId: string, role: string) => server.fetch('/api/test/member', json({ orgId, userId, role }))
const errorOf = async (res: Response) => (await res.json() as { error?: string, data?: { code?: string } })

describe('organizations in a built app', () => {
  it('route rules: 401 without a token, 403 permission_denied without an organization or the permission, 200 with it', async () => {
    const ada = await userOf('ada')
    await seed(ACME, 'ada', 'member')
    await seed(GLOBEX, 'ada', 'admin')
    expect((await server.fetch('/api/project/hello')).status).toBe(401)
    const noOrg = await ada.get('/api/project/hello')
    expect(noOrg.status).toBe(403)
    expect(await errorOf(noOrg)).toEqual({ statusCode: 403, message: 'You do not have the permission for this', error: 'permission_denied' })

    expect((await ada.activate(GLOBEX)).status).toBe(200)
    expect(ada.claims()).toMatchObject({ sub: 'ada', org: GLOBEX, orgRole: 'admin', role: 'user' })
    expect(await (await ada.get('/api/project/hello')).json()).toEqual({ sub: 'ada', org: GLOBEX, orgRole: 'admin' })
    expect((await ada.get('/api/admin/hello')).status).toBe(200)

    expect((await ada.activate(ACME)).status).toBe(200)
    expect((await ada.get('/api/project/hello')).status).toBe(403)
    expect((await ada.get('/api/admin/hello')).status).toBe(403)
    expect((await ada.get('/api/protected/hello')).status).toBe(200)
    // The choice survives a refresh of the session.
    await ada.refresh()
    expect(ada.claims()).toMatchObject({ org: ACME, orgRole: 'member' })

    const outsider = await ada.activate(`org_${'nowhere'.padEnd(22, '0')}`)
    expect(outsider.status).toBe(404)
    expect(await errorOf(outsider)).toMatchObject({ error: 'not_found' })
  })

  it('requirePermission and hasPermission in a host route: resolveRoles for one document, another organization by id', async () => {
    const bea = await userOf('bea')
    await seed(ACME, 'bea', 'member')
    await seed(GLOBEX, 'bea', 'owner')
    await bea.activate(ACME)
    expect(await (await bea.get('/api/doc?id=shared-doc')).json()).toEqual({ sub: 'bea', canDelete: false })
    const refused = await bea.get('/api/doc?id=other')
    expect(refused.status).toBe(403)
    expect((await errorOf(refused)).data).toMatchObject({ code: 'permission_denied' })
    expect(await (await bea.get(`/api/doc?id=other&org=${GLOBEX}`)).json()).toEqual({ sub: 'bea', canDelete: true })
    expect((await server.fetch('/api/doc?id=shared-doc')).status).toBe(401)
  })

  it('a role change makes the member\'s token stale at once (401 session_stale); the refreshed token has the new role', async () => {
    const cid = await userOf('cid')
    const owner = await userOf('olga')
    await seed(ACME, 'cid', 'member')
    await seed(ACME, 'olga', 'owner')
    await cid.activate(ACME)
    await owner.activate(ACME)
    const before = cid.token
    expect((await cid.get('/api/project/hello')).status).toBe(403)
    const patch = await server.fetch(`/auth/orgs/${ACME}/members/cid`, { method: 'PATCH', headers: { 'authorization': `Bearer ${owner.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ role: 'admin' }) })
    expect(patch.status, await patch.clone().text()).toBe(200)
    const stale = await cid.get('/api/protected/hello', before)
    expect(stale.status).toBe(401)
    expect(await errorOf(stale)).toMatchObject({ error: 'session_stale' })
    await cid.refresh()
    expect(cid.claims()).toMatchObject({ org: ACME, orgRole: 'admin' })
    expect((await cid.get('/api/project/hello')).status).toBe(200)
    // The owner's own token is untouched.
    expect((await owner.get('/api/admin/hello')).status).toBe(200)
  })

  it('two processes on one Redis behave as one: 50 accepts of one invitation make one member, 50 demotions leave an owner, a role change is stale on the other process', async () => {
    const prefix = `svc-auth-test:orgs-${Date.now()}:`
    const env = { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'redis', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL: testRedisUrl(), NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_PREFIX: prefix, NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false', FIXTURE_ORGS_IN_STORE: '1' }
    const [a, b] = await Promise.all([startServerProcess(env, 'org-access'), startServerProcess(env, 'org-access')])
    try {
      /** A verified user logged in on `at`: its token, refresh cookie and calls to either process. */
      const user = async (at: typeof a, sub: string) => {
        const session = await login(at, { sub, email: `${sub}@example.com`, emailVerified: true })
        const send = (on: typeof a, method: string, path: string, body?: unknown) => on.fetch(path, { method, headers: { 'authorization': `Bearer ${session.token}`, 'cookie': `svc-refresh=${session.refreshCookie}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
        return { sub, token: session.token, send }
      }
      const owner = await user(a, 'owner-a')
      const created = await owner.send(a, 'POST', '/auth/orgs', { name: 'Shared' })
      expect(created.status, await created.clone().text()).toBe(201)
      const orgId = (await created.json() as { organization: { id: string } }).organization.id
      const inviteAndLink = async (email: string, role: string) => {
        expect((await owner.send(a, 'POST', `/auth/orgs/${orgId}/invitations`, { email, role })).status).toBe(201)
        const { link } = await (await a.fetch(`/api/test/invitations?email=${encodeURIComponent(email)}`)).json() as { link: string }
        return new URL(link, a.url).searchParams.get('token')!
      }

      // 50 accepts of one invitation, half on each process: one membership.
      const racer = await user(b, 'racer')
      const token = await inviteAndLink('racer@example.com', 'member')
      const accepts = await Promise.all(Array.from({ length: 50 }, (_, i) => racer.send(i % 2 ? a : b, 'POST', '/auth/invitations/accept', { token })))
      expect(accepts.map(res => res.status).filter(status => status === 200)).toHaveLength(1)
      expect(accepts.every(res => res.status < 500)).toBe(true)
      const { members } = await (await owner.send(b, 'GET', `/auth/orgs/${orgId}/members`)).json() as { members: Array<{ userId: string, role: string }> }
      expect(members.filter(m => m.userId === 'racer')).toEqual([{ userId: 'racer', role: 'member', email: 'racer@example.com', teams: [] }])

      // A role change on one process makes the member's token stale on the other within a second.
      const before = Date.now()
      expect((await owner.send(a, 'PATCH', `/auth/orgs/${orgId}/members/racer`, { role: 'admin' })).status).toBe(200)
      await vi.waitFor(async () => expect((await racer.send(b, 'GET', '/auth/orgs')).status).toBe(401), { timeout: 1000, interval: 20 })
      expect(Date.now() - before).toBeLessThan(1000)

      // Three owners, 50 demotions and removals of each other spread over both processes: an owner is left.
      const owners = [owner, await user(a, 'owner-b'), await user(b, 'owner-c')]
      for (const next of owners.slice(1)) {
        const t = await inviteAndLink(`${next.sub}@example.com`, 'owner')
        expect((await next.send(b, 'POST', '/auth/invitations/accept', { token: t })).status).toBe(200)
      }
      const changes = await Promise.all(Array.from({ length: 50 }, (_, i) => {
        const actor = owners[i % 3]!
        const target = owners[(i + 1) % 3]!
        const on = i % 2 ? a : b
        return i % 4 < 2 ? actor.send(on, 'DELETE', `/auth/orgs/${orgId}/members/${target.sub}`) : actor.send(on, 'PATCH', `/auth/orgs/${orgId}/members/${target.sub}`, { role: 'member' })
      }))
      expect(changes.every(res => res.status < 500)).toBe(true)
      // An owner nobody changed still has a valid token and sees the members.
      const views = await Promise.all(owners.map(async o => (await o.send(a, 'GET', `/auth/orgs/${orgId}/members`)).json() as Promise<{ members?: Array<{ role: string }> }>))
      const seen = views.find(view => view.members)
      expect(seen?.members?.filter(m => m.role === 'owner').length).toBeGreaterThanOrEqual(1)
    }
    finally {
      await Promise.all([a.stop(), b.stop()])
      await deleteRedisKeys(prefix)
    }
  })
})
