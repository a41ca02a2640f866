import { decodeJwt } from 'jose'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { defineAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { peekAuthContext } from '../../src/runtime/server/utils/auth-context'
import { auditLogOf } from '../../src/runtime/audit/server/audit-recorder'
import { createTestAuth } from '../../src/testing/test-tokens'
import { errorOf, json, organizationsApp, type OrgUser } from './helpers/organizations-app'
import { nitro } from './helpers/nitro-stub'
import { fakeEvent } from './helpers/event'
import devtoolsAudit from '../../src/runtime/devtools/server/routes/audit.get'
import { DEVTOOLS_HEADER } from '../../src/runtime/devtools/server/devtools-guard'

// The endpoints of the audit admin page (`audit.adminPage`) served in-process with the audit log on the memory
// store: who may call them, the search, a user's sessions, and ending one (recorded with the administrator as actor).
vi.mock('nitropack/runtime', () => import('./helpers/nitro-stub'))

const app = organizationsApp('memory', { audit: { adminPage: '/admin/security' }, impersonation: { enabled: true } })
const ADMINS = new Set<string>()
beforeAll(() => {
  defineAuthHandlers({ audit: { isAuditReader: claims => ADMINS.has(claims.sub) } })
})

const USERS = '/auth/audit/users'
const sessionsOf = (id: string) => `${USERS}/${encodeURIComponent(id)}/sessions`
const sidOf = (user: OrgUser) => decodeJwt(user.token).sid as string
const get = (user: OrgUser | undefined, path: string) => (user ? user.b.send('GET', path, { bearer: user.token }) : app.browser().send('GET', path))
const del = (user: OrgUser, path: string, headers: Record<string, string> = {}) => fetch(`${app.base}${path}`, { method: 'DELETE', headers: { authorization: `Bearer ${user.token}`, accept: 'application/json', ...headers } })

async function admin(): Promise<OrgUser> {
  const user = await app.logIn(app.unique('admin'))
  ADMINS.add(user.sub)
  return user
}

describe('who may use the admin page\'s endpoints', () => {
  it('401 without a token, 403 permission_denied without isAuditReader, for an organization\'s audit reader, and in an impersonated session', async () => {
    const target = await app.logIn(app.unique('target'))
    const paths = [`${USERS}?q=x`, sessionsOf(target.sub)]
    for (const path of paths) {
      const res = await get(undefined, path)
      expect(await json(res, 401)).toMatchObject({ statusCode: 401, error: 'unauthorized' })
    }
    expect(await (await fetch(`${app.base}${sessionsOf(target.sub)}/${sidOf(target)}`, { method: 'DELETE' })).json()).toMatchObject({ statusCode: 401, error: 'unauthorized' })

    const plain = await app.logIn(app.unique('plain'))
    // An owner of the active organization: its role (`*`) grants audit:read for that organization's events only.
    const owner = await app.logIn(app.unique('owner'))
    const orgId = await app.createOrg(owner)
    owner.token = (await json<{ accessToken: string }>(await app.call(owner, 'POST', 'orgs/active', { orgId }))).accessToken
    expect(decodeJwt(owner.token)).toMatchObject({ org: orgId, orgRole: 'owner' })
    for (const user of [plain, owner]) {
      for (const path of paths) expect(await json(await get(user, path), 403)).toEqual({ statusCode: 403, message: expect.any(String), error: 'permission_denied' })
      expect(await errorOf(await del(user, `${sessionsOf(target.sub)}/${sidOf(target)}`), 403)).toBe('permission_denied')
    }
    // Nothing was ended by the refusals.
    const boss = await admin()
    expect((await json<{ sessions: unknown[] }>(await get(boss, sessionsOf(target.sub)))).sessions).toHaveLength(1)

    // An administrator acting as another user (an impersonated token) cannot use it either.
    const testAuth = await createTestAuth({ config: { token: { secret: app.options.token.secret }, impersonation: { enabled: true } }, env: {} })
    try {
      const impersonated = await testAuth.mintImpersonated({ sub: target.sub }, { sub: boss.sub })
      const res = await fetch(`${app.base}${USERS}?q=x`, { headers: impersonated.headers })
      expect(await json(res, 403)).toMatchObject({ error: 'impersonated_session' })
    }
    finally {
      await testAuth.dispose()
    }
  })

  it('an empty search finds nobody: the page asks so to learn whether the caller may use it', async () => {
    const boss = await admin()
    expect(await json(await get(boss, USERS))).toEqual({ users: [] })
    expect(await json(await get(boss, `${USERS}?q=`))).toEqual({ users: [] })
  })
})

describe('the search', () => {
  it('finds a password account by email (any case) through findUser, a user id as typed, and nobody for an unknown email', async () => {
    const boss = await admin()
    const email = app.unique('carla')
    const carla = await app.logIn(email)
    await app.logIn(email)
    expect(await json(await get(boss, `${USERS}?q=${encodeURIComponent(`  ${email.toUpperCase()} `)}`))).toEqual({ users: [{ id: carla.sub, email, sessions: 2 }] })
    expect(await json(await get(boss, `${USERS}?q=${encodeURIComponent(carla.sub)}`))).toEqual({ users: [{ id: carla.sub, sessions: 2 }] })
    // An id nobody has: shown as typed (it may have an audit trail), without sessions.
    expect(await json(await get(boss, `${USERS}?q=${encodeURIComponent('mock:nobody')}`))).toEqual({ users: [{ id: 'mock:nobody', sessions: 0 }] })
    expect(await json(await get(boss, `${USERS}?q=${encodeURIComponent(app.unique('ghost'))}`))).toEqual({ users: [] })
  })

  it('an email that is also a user id with sessions is listed twice: the account and the id', async () => {
    const boss = await admin()
    const email = app.unique('dual')
    const account = await app.logIn(email)
    // A session whose user id is the address itself (a host whose ids are emails).
    const ctx = peekAuthContext()!
    const { issueRefreshToken } = await import('../../src/runtime/server/lib/core/records/refresh-token')
    await issueRefreshToken(ctx, { user: { sub: email }, userId: email, claims: {}, provider: 'test', client: {} })
    expect(await json(await get(boss, `${USERS}?q=${encodeURIComponent(email)}`))).toEqual({ users: [{ id: account.sub, email, sessions: 1 }, { id: email, sessions: 1 }] })
  })

  it('a query over 512 characters is a 400 bad_request', async () => {
    const boss = await admin()
    expect(await json(await get(boss, `${USERS}?q=${'x'.repeat(513)}`), 400)).toMatchObject({ statusCode: 400, error: 'bad_request' })
  })
})

describe('a user\'s sessions', () => {
  it('lists them newest first with their client, marks the administrator\'s own, and 400 for an id over 512 characters', async () => {
    const boss = await admin()
    const email = app.unique('dora')
    const first = await app.logIn(email)
    const second = await app.logIn(email)
    const { sessions } = await json<{ sessions: Array<Record<string, unknown>> }>(await get(boss, sessionsOf(first.sub)))
    expect(sessions.map(s => s.id)).toEqual([sidOf(second), sidOf(first)])
    expect(sessions[0]).toEqual({ id: sidOf(second), current: false, createdAt: expect.any(String), lastUsedAt: expect.any(String), provider: 'password', client: expect.any(Object) })
    const own = await json<{ sessions: Array<{ id: string, current: boolean }> }>(await get(boss, sessionsOf(boss.sub)))
    expect(own.sessions).toEqual([expect.objectContaining({ id: sidOf(boss), current: true })])
    expect(await json(await get(boss, sessionsOf('x'.repeat(513))), 400)).toMatchObject({ error: 'bad_request' })
  })
})

describe('ending a user\'s session', () => {
  it('ends it (its refresh and access tokens die), records who did it, and tells the hook reason host', async () => {
    const boss = await admin()
    const email = app.unique('eve')
    const victim = await app.logIn(email)
    const other = await app.logIn(email)
    const sid = sidOf(victim)
    const hooksBefore = nitro.hooks.length
    expect(await json(await del(boss, `${sessionsOf(victim.sub)}/${encodeURIComponent(sid)}`))).toEqual({ success: true })

    expect(await errorOf(await victim.b.send('POST', app.options.endpoints.refreshPath, { body: {} }), 401)).toBe('invalid_refresh_token')
    expect(await errorOf(await app.call(victim, 'GET', 'orgs'), 401)).toBe('session_revoked')
    expect((await app.call(other, 'GET', 'orgs')).status).toBe(200)
    expect((await json<{ sessions: Array<{ id: string }> }>(await get(boss, sessionsOf(victim.sub)))).sessions.map(s => s.id)).toEqual([sidOf(other)])

    expect(nitro.hooks.slice(hooksBefore).filter(([name]) => name === 'svc:session:revoked').map(([, payload]) => payload)).toEqual([{ sessionId: sid, userId: victim.sub, reason: 'host' }])
    const { events } = await (await auditLogOf(peekAuthContext()!)).newest(undefined, 50)
    const revoked = events.filter(e => e.type === 'session.revoked' && e.session === sid)
    expect(revoked).toEqual([expect.objectContaining({ outcome: 'success', actor: boss.sub, subject: victim.sub, session: sid, details: { reason: 'host' } })])
    expect(revoked[0]).not.toHaveProperty('impersonator')
    expect(JSON.stringify(revoked)).not.toContain(victim.token)
  })

  it('404 not_found for an ended session, another user\'s session, a malformed id and an unknown user; 400 for an id over 512 characters', async () => {
    const boss = await admin()
    const frank = await app.logIn(app.unique('frank'))
    const gina = await app.logIn(app.unique('gina'))
    const path = (user: string, sid: string) => `${sessionsOf(user)}/${encodeURIComponent(sid)}`
    expect(await json(await del(boss, path(frank.sub, sidOf(frank))))).toEqual({ success: true })
    for (const [user, sid] of [[frank.sub, sidOf(frank)], [frank.sub, sidOf(gina)], [frank.sub, 'not a session!'], ['mock:nobody', sidOf(gina)]] as const) {
      expect(await json(await del(boss, path(user, sid)), 404), `${user} ${sid}`).toEqual({ statusCode: 404, message: 'No such session', error: 'not_found' })
    }
    expect(await errorOf(await del(boss, path('x'.repeat(513), sidOf(gina))), 400)).toBe('bad_request')
    // Gina's session is untouched.
    expect((await app.call(gina, 'GET', 'orgs')).status).toBe(200)
  })

  it('50 concurrent ends of one session: exactly one 200, the others 404, one session.revoked event', async () => {
    const boss = await admin()
    const kim = await app.logIn(app.unique('kim'))
    const answers = await Promise.all(Array.from({ length: 50 }, () => del(boss, `${sessionsOf(kim.sub)}/${sidOf(kim)}`)))
    const statuses = answers.map(res => res.status)
    expect(statuses.filter(status => status === 200)).toHaveLength(1)
    expect(statuses.filter(status => status === 404)).toHaveLength(49)
    const log = await auditLogOf(peekAuthContext()!)
    const ends: string[] = []
    for await (const event of log.oldest()) if (event.type === 'session.revoked' && event.session === sidOf(kim)) ends.push(event.actor ?? '')
    expect(ends).toEqual([boss.sub])
    expect(await errorOf(await kim.b.send('POST', app.options.endpoints.refreshPath, { body: {} }), 401)).toBe('invalid_refresh_token')
    expect((await json<{ sessions: unknown[] }>(await get(boss, sessionsOf(kim.sub)))).sessions).toEqual([])
  })

  it('a cross-origin request is refused before anything else (403 cross_origin_request)', async () => {
    const boss = await admin()
    const hana = await app.logIn(app.unique('hana'))
    const res = await del(boss, `${sessionsOf(hana.sub)}/${sidOf(hana)}`, { origin: 'https://elsewhere.example' })
    expect(await json(res, 403)).toMatchObject({ error: 'cross_origin_request' })
    expect((await app.call(hana, 'GET', 'orgs')).status).toBe(200)
  })
})

describe('the DevTools audit panel\'s route (development only)', () => {
  it('answers the newest events first, without their chain fields, to the tab only', async () => {
    const boss = await admin()
    const ivan = await app.logIn(app.unique('ivan'))
    expect(await json(await del(boss, `${sessionsOf(ivan.sub)}/${sidOf(ivan)}`))).toEqual({ success: true })
    const local = { 'host': 'localhost:3000', [DEVTOOLS_HEADER]: '1', 'sec-fetch-site': 'same-origin' }
    const { events } = await devtoolsAudit(fakeEvent({ headers: local })) as { events: Array<Record<string, unknown>> }
    const stored = (await (await auditLogOf(peekAuthContext()!)).newest(undefined, 50)).events
    expect(events.map(e => e.id)).toEqual(stored.map(e => e.id))
    expect(events[0]).toMatchObject({ type: 'session.revoked', actor: boss.sub, subject: ivan.sub, session: sidOf(ivan) })
    expect((events as Array<{ seq: number }>).map(e => e.seq)).toEqual(stored.map(e => e.seq).sort((a, b) => b - a))
    expect(events.some(e => 'mac' in e || 'kid' in e || 'prev' in e)).toBe(false)
    expect(await devtoolsAudit(fakeEvent({ headers: { host: 'localhost:3000' } }))).toMatchObject({ statusCode: 403, error: 'forbidden' })
  })
})
