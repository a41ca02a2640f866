import { randomUUID } from 'node:crypto'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NEW_PASSWORD, PASSWORD, codeCookieFrom, loginUser, nextCode, post, registerUser, uniqueEmail } from './password-helpers'
import { deleteRedisKeys, startRedisCluster, type RunningRedis } from '../support/redis-servers'
import { testRedisUrl } from '../support/test-redis'
import { setupApp } from './app'
import { bearer, cookie, json, login, type Server, type Session, setCookieValue } from './requests'
import { startServerProcess, type ServerProcess } from './server-processes'

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0'
const SAFARI = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15'

type Fetcher = Pick<Server, 'fetch'>

/** Logs `sub` in from a "browser" with this user agent. */
async function loginFrom(server: Fetcher, sub: string, userAgent = FIREFOX): Promise<Session> {
  const withAgent: Fetcher = { fetch: (path, init) => server.fetch(path, { ...init, headers: { ...(init?.headers as Record<string, string>), 'user-agent': userAgent } }) }
  return login(withAgent, { sub, email: `${sub}@example.com` })
}

const sessionsOf = async (server: Fetcher, token: string) => server.fetch('/auth/sessions', bearer(token))
const del = (server: Fetcher, id: string, token: string) => server.fetch(`/auth/sessions/${encodeURIComponent(id)}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } })
const sidOf = (token: string) => decodeJwt(token).sid as string

/**
 * Polls `check` until it answers 401 `session_revoked`; fails when the token is still accepted
 * 1 s after `since`. Returns how long it took.
 */
async function refusedWithin(server: Fetcher, token: string, since: number, path = '/api/user/me'): Promise<number> {
  for (;;) {
    const res = await server.fetch(path, bearer(token))
    if (res.status === 401) {
      const body = await res.json()
      // A host's own handler (requireAuthUser) answers in Nitro's error format, with the code in `data`.
      if (path === '/api/whoami') expect(body).toMatchObject({ statusCode: 401, message: 'The session of this access token has ended', data: { code: 'session_revoked' } })
      else expect(body).toEqual({ statusCode: 401, message: 'The session of this access token has ended', error: 'session_revoked' })
      return Date.now() - since
    }
    expect(res.status).toBe(200)
    if (Date.now() - since > 1000) throw new Error(`${path} still accepts the token 1 s after its session was revoked`)
    await sleep(20)
  }
}

const server = await setupApp('basic', { NUXT_SVC_AUTH_IMPERSONATION_ENABLED: 'true' })

describe('session endpoints', () => {
  it('GET /auth/sessions lists my sessions with the current one marked, nothing secret, nobody else\'s', async () => {
    const sub = `u-${randomUUID()}`
    const laptop = await loginFrom(server, sub, FIREFOX)
    const phone = await loginFrom(server, sub, SAFARI)
    await loginFrom(server, `other-${randomUUID()}`)
    const res = await sessionsOf(server, laptop.token)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const { sessions } = await res.json() as { sessions: Array<Record<string, unknown>> }
    expect(sessions).toHaveLength(2)
    const byId = Object.fromEntries(sessions.map(s => [s.id, s]))
    expect(byId[sidOf(laptop.token)]).toMatchObject({ current: true, provider: 'test', client: { userAgent: 'Firefox on Linux', address: '127.0.0.0/24' } })
    expect(byId[sidOf(phone.token)]).toMatchObject({ current: false, client: { userAgent: 'Safari on macOS' } })
    for (const s of sessions) {
      expect(Object.keys(s).sort()).toEqual(['client', 'createdAt', 'current', 'id', 'lastUsedAt', 'provider'])
      expect(Date.parse(s.createdAt as string)).toBeGreaterThan(Date.now() - 60_000)
    }
    const text = JSON.stringify(sessions)
    for (const secret of [laptop.refreshCookie!, phone.refreshCookie!]) expect(text).not.toContain(secret)
  })

  it('lastUsedAt moves with a refresh', async () => {
    const s = await loginFrom(server, `u-${randomUUID()}`)
    const [before] = (await (await sessionsOf(server, s.token)).json()).sessions
    await sleep(20)
    const refreshed = await server.fetch('/auth/refresh', cookie(s.refreshCookie!))
    expect(refreshed.status).toBe(200)
    const [after] = (await (await sessionsOf(server, s.token)).json()).sessions
    expect(after.id).toBe(before.id)
    expect(Date.parse(after.lastUsedAt)).toBeGreaterThan(Date.parse(before.lastUsedAt))
    expect(after.createdAt).toBe(before.createdAt)
  })

  it('DELETE /auth/sessions/:id ends one of mine; the other browser\'s next request fails; 404 for ids not mine', async () => {
    const sub = `u-${randomUUID()}`
    const laptop = await loginFrom(server, sub)
    const phone = await loginFrom(server, sub, SAFARI)
    const stranger = await loginFrom(server, `s-${randomUUID()}`)
    await server.fetch('/api/test/session-hooks')

    const notMine = await del(server, sidOf(stranger.token), laptop.token)
    expect(notMine.status).toBe(404)
    expect(await notMine.json()).toEqual({ statusCode: 404, message: 'No such session', error: 'not_found' })
    expect((await server.fetch('/api/user/me', bearer(stranger.token))).status).toBe(200)
    for (const id of ['unknown-session', 'a'.repeat(200), '..%2F..', '%00']) expect((await del(server, id, laptop.token)).status).toBe(404)
    // A malformed percent-encoding is a 404 too, never a 500.
    expect((await server.fetch('/auth/sessions/%E0%A4%A', { method: 'DELETE', headers: { authorization: `Bearer ${laptop.token}` } })).status).toBe(404)

    const ok = await del(server, sidOf(phone.token), laptop.token)
    expect(ok.status).toBe(200)
    expect(await ok.json()).toEqual({ success: true })
    const since = Date.now()
    await refusedWithin(server, phone.token, since)
    await refusedWithin(server, phone.token, since, '/api/protected/hello')
    await refusedWithin(server, phone.token, since, '/api/whoami')
    await refusedWithin(server, phone.token, since, '/auth/sessions')
    const refresh = await server.fetch('/auth/refresh', cookie(phone.refreshCookie!))
    expect(refresh.status).toBe(401)
    expect((await del(server, sidOf(phone.token), laptop.token)).status).toBe(404)
    // The laptop is untouched; its list no longer has the phone.
    const { sessions } = await (await sessionsOf(server, laptop.token)).json()
    expect(sessions.map((s: { id: string }) => s.id)).toEqual([sidOf(laptop.token)])
    expect(await (await server.fetch('/api/test/session-hooks')).json()).toEqual([{ sessionId: sidOf(phone.token), userId: sub, reason: 'user' }])
  })

  it('POST /auth/sessions/revoke-others ends all my other sessions and keeps this one', async () => {
    const sub = `u-${randomUUID()}`
    const here = await loginFrom(server, sub)
    const others = await Promise.all([loginFrom(server, sub), loginFrom(server, sub, SAFARI)])
    const res = await server.fetch('/auth/sessions/revoke-others', { method: 'POST', headers: { authorization: `Bearer ${here.token}` } })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ success: true, revoked: 2 })
    const since = Date.now()
    for (const other of others) await refusedWithin(server, other.token, since)
    expect((await server.fetch('/api/user/me', bearer(here.token))).status).toBe(200)
    expect((await server.fetch('/auth/refresh', cookie(here.refreshCookie!))).status).toBe(200)
  })

  it('needs a valid bearer token; refuses impersonated tokens and cookies alone', async () => {
    for (const init of [{}, bearer('garbage'), { headers: { cookie: 'svc-refresh=whatever' } }]) {
      const res = await server.fetch('/auth/sessions', init)
      expect(res.status).toBe(401)
      expect(await res.json()).toMatchObject({ statusCode: 401, error: 'unauthorized' })
    }
    const admin = await login(server, { sub: 'admin', email: 'admin@example.com', role: 'admin' })
    const imp = await server.fetch('/auth/impersonate', json({ targetUserId: 'alice' }, { authorization: `Bearer ${admin.token}`, cookie: `svc-refresh=${admin.refreshCookie}` }))
    const { accessToken } = await imp.json()
    for (const res of [
      await sessionsOf(server, accessToken),
      await del(server, sidOf(accessToken), accessToken),
      await server.fetch('/auth/sessions/revoke-others', { method: 'POST', headers: { authorization: `Bearer ${accessToken}` } }),
    ]) {
      expect(res.status).toBe(403)
      expect(await res.json()).toMatchObject({ error: 'impersonated_session' })
    }
  })

  it('host utils list a user\'s sessions (impersonations included) and end them', async () => {
    const sub = `u-${randomUUID()}`
    const a = await loginFrom(server, sub)
    const b = await loginFrom(server, sub)
    const list = await (await server.fetch('/api/test/user-sessions', json({ userId: sub }))).json()
    expect(list.sessions.map((s: { id: string }) => s.id).sort()).toEqual([sidOf(a.token), sidOf(b.token)].sort())
    expect(list.sessions.every((s: { current: boolean }) => s.current === false)).toBe(true)
    await server.fetch('/api/test/session-hooks')
    expect(await (await server.fetch('/api/test/user-sessions', json({ userId: sub, revoke: sidOf(a.token) }))).json()).toEqual({ revoked: true })
    expect(await (await server.fetch('/api/test/user-sessions', json({ userId: 'someone-else', revoke: sidOf(b.token) }))).json()).toEqual({ revoked: false })
    expect(await (await server.fetch('/api/test/user-sessions', json({ userId: sub, revokeAll: true }))).json()).toEqual({ revoked: 1 })
    const since = Date.now()
    await refusedWithin(server, a.token, since)
    await refusedWithin(server, b.token, since)
    expect((await (await server.fetch('/api/test/session-hooks')).json()).map((c: { reason: string }) => c.reason)).toEqual(['host', 'host'])
  })
})

describe('without revocation of access tokens, and without token refresh', () => {
  let stateless: ServerProcess
  let noRefresh: ServerProcess
  beforeAll(async () => {
    ;[stateless, noRefresh] = await Promise.all([
      startServerProcess({ NUXT_SVC_AUTH_SESSIONS_REVOKE_ACCESS_TOKENS: 'false' }),
      startServerProcess({ NUXT_SVC_AUTH_TOKEN_REFRESH_ENABLED: 'false' }),
    ])
  })
  afterAll(() => Promise.all([stateless?.stop(), noRefresh?.stop()]))

  it('sessions.revokeAccessTokens false: the session ends, its access token lives until it expires', async () => {
    const sub = `u-${randomUUID()}`
    const here = await loginFrom(stateless, sub)
    const other = await loginFrom(stateless, sub)
    expect((await del(stateless, sidOf(other.token), here.token)).status).toBe(200)
    expect((await stateless.fetch('/auth/refresh', cookie(other.refreshCookie!))).status).toBe(401)
    expect((await stateless.fetch('/auth/logout', cookie(here.refreshCookie!))).status).toBe(200)
    await sleep(300)
    for (const token of [here.token, other.token]) {
      for (const path of ['/api/user/me', '/api/protected/hello', '/auth/sessions']) expect((await stateless.fetch(path, bearer(token))).status).toBe(200)
    }
  })

  it('tokenRefresh disabled: there are no sessions to list or end (404)', async () => {
    const s = await login(noRefresh)
    expect(s.refreshCookie).toBeUndefined()
    for (const res of [
      await sessionsOf(noRefresh, s.token),
      await del(noRefresh, sidOf(s.token), s.token),
      await noRefresh.fetch('/auth/sessions/revoke-others', { method: 'POST', headers: { authorization: `Bearer ${s.token}` } }),
    ]) {
      expect(res.status).toBe(404)
      expect(await res.json()).toMatchObject({ statusCode: 404, error: 'not_found' })
    }
  })
})

/** The password fixture and the basic fixture, each as one process or as two sharing Redis or a Redis Cluster. */
describe.each([
  ['one process', 'none'],
  ['two processes sharing Redis', 'redis'],
  ['two processes sharing a Redis Cluster', 'cluster'],
] as const)('access tokens die with their session (%s)', (_name, store) => {
  const shared = store !== 'none'
  const prefix = `svc-auth-e2e-sessions:${randomUUID()}:`
  let redisEnv: Record<string, string> = {}
  let cluster: RunningRedis | undefined
  let basic: ServerProcess
  let basicOther: ServerProcess
  let password: ServerProcess
  let passwordOther: ServerProcess
  /** Where the revocation is made and where it is checked (the same process, or the other one). */
  const check = (server: ServerProcess, other: ServerProcess) => (shared ? other : server)

  beforeAll(async () => {
    if (store === 'redis') redisEnv = { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'redis', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL: testRedisUrl(), NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_PREFIX: prefix }
    if (store === 'cluster') {
      const started = await startRedisCluster(3)
      cluster = started
      redisEnv = { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'redis', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_CLUSTER: JSON.stringify(started.nodes), NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_PREFIX: prefix }
    }
    // No grace period: a second use of a rotated cookie is reuse at once.
    const env = { NUXT_SVC_AUTH_IMPERSONATION_ENABLED: 'true', NUXT_SVC_AUTH_TOKEN_REFRESH_REUSE_GRACE_PERIOD: '0', ...redisEnv }
    ;[basic, password] = await Promise.all([startServerProcess(env), startServerProcess(redisEnv, 'password')])
    if (shared) [basicOther, passwordOther] = await Promise.all([startServerProcess(env), startServerProcess(redisEnv, 'password')])
  }, 90_000)
  afterAll(async () => {
    await Promise.all([basic, basicOther, password, passwordOther].map(s => s?.stop()))
    await cluster?.stop()
    if (store === 'redis') await deleteRedisKeys(prefix)
  }, 30_000)

  it('logout', async () => {
    const s = await login(basic)
    const other = check(basic, basicOther)
    expect((await other.fetch('/api/user/me', bearer(s.token))).status).toBe(200)
    expect((await basic.fetch('/auth/logout', cookie(s.refreshCookie!))).status).toBe(200)
    await refusedWithin(other, s.token, Date.now())
    await refusedWithin(other, s.token, Date.now(), '/api/protected/hello')
    await refusedWithin(other, s.token, Date.now(), '/api/whoami')
  })

  it('refresh token reuse', async () => {
    const s = await login(basic)
    const other = check(basic, basicOther)
    const rotated = await basic.fetch('/auth/refresh', cookie(s.refreshCookie!))
    const fresh = (await rotated.json()).token as string
    // Presenting the rotated cookie again (no grace period) revokes the whole session.
    const reuse = await basic.fetch('/auth/refresh', cookie(s.refreshCookie!))
    expect(reuse.status).toBe(401)
    const since = Date.now()
    await refusedWithin(other, s.token, since)
    await refusedWithin(other, fresh, since)
  })

  it('the session endpoints', async () => {
    const sub = `u-${randomUUID()}`
    const a = await login(basic, { sub })
    const b = await login(basic, { sub })
    const c = await login(basic, { sub })
    const other = check(basic, basicOther)
    expect((await del(basic, sidOf(b.token), a.token)).status).toBe(200)
    await refusedWithin(other, b.token, Date.now())
    expect((await basic.fetch('/auth/sessions/revoke-others', { method: 'POST', headers: { authorization: `Bearer ${a.token}` } })).status).toBe(200)
    await refusedWithin(other, c.token, Date.now())
    expect((await other.fetch('/api/user/me', bearer(a.token))).status).toBe(200)
  })

  it('unimpersonate (the impersonated token); the requester\'s session goes on through the impersonation', async () => {
    const admin = await login(basic, { sub: 'admin', email: 'admin@example.com', role: 'admin' })
    const other = check(basic, basicOther)
    const imp = await basic.fetch('/auth/impersonate', json({ targetUserId: 'alice' }, { authorization: `Bearer ${admin.token}`, cookie: `svc-refresh=${admin.refreshCookie}` }))
    expect(imp.status).toBe(200)
    // The way back continues the requester's session: it does not end, only the token its cookie held is retired.
    expect((await other.fetch('/api/user/me', bearer(admin.token))).status).toBe(200)
    const { accessToken } = await imp.json()
    const impCookie = setCookieValue(imp, 'svc-refresh')!
    expect((await other.fetch('/api/user/me', bearer(accessToken))).status).toBe(200)
    const back = await basic.fetch('/auth/unimpersonate', { method: 'POST', headers: { authorization: `Bearer ${accessToken}`, cookie: `svc-refresh=${impCookie}` } })
    expect(back.status).toBe(200)
    await refusedWithin(other, accessToken, Date.now())
    expect((await other.fetch('/api/user/me', bearer((await back.json()).accessToken))).status).toBe(200)
  })

  it('password reset (every session) and password change (every other session)', async () => {
    const email = uniqueEmail('die')
    const one = await registerUser(password, email)
    const two = await loginUser(password, email)
    const other = check(password, passwordOther)

    const auth = { authorization: `Bearer ${two.token}` }
    expect((await post(password, '/auth/password/change', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }, auth)).status).toBe(200)
    await refusedWithin(other, one.token, Date.now())
    expect((await other.fetch('/api/user/me', bearer(two.token))).status).toBe(200)

    await post(password, '/auth/password/reset-request', { email })
    const code = await nextCode(password, email, 'reset')
    const verified = await password.fetch(`/auth/password/reset-verify?code=${code}`)
    const sessionId = /session=([\w-]+)/.exec(verified.headers.get('location')!)![1]!
    const done = await post(password, '/auth/password/reset-complete', { sessionId, newPassword: PASSWORD }, { cookie: codeCookieFrom(verified) })
    expect(done.status).toBe(200)
    await refusedWithin(other, two.token, Date.now())
    // The password endpoint that takes a bearer token says why, too.
    const late = await post(other, '/auth/password/change', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }, { authorization: `Bearer ${two.token}` })
    expect(late.status).toBe(401)
    expect((await late.json()).error).toBe('session_revoked')
  })
})
