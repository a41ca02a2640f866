import { decodeJwt } from 'jose'
import { describe, expect, it } from 'vitest'
import { setupApp } from './app'
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
  const user = {
    token: session.token,
    claims: () => decodeJwt(user.token),
    get: (path: string, token = user.token) => server.fetch(path, bearer(token)),
    async activate(orgId: string | null) {
      const res = await server.fetch('/auth/orgs/active', json({ orgId }, { authorization: `Bearer ${user.token}`, cookie: `svc-refresh=${cookie}` }))
      if (res.status === 200) user.token = (await res.json() as { accessToken: string }).accessToken
      return res
    },
    async refresh() {
      const res = await server.fetch('/auth/refresh', { method: 'POST', headers: { cookie: `svc-refresh=${cookie}` } })
      expect(res.status).toBe(200)
      cookie = setCookieValue(res, 'svc-refresh') ?? cookie
      user.token = (await res.json() as { accessToken: string }).accessToken
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
})
