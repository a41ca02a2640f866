import { decodeJwt } from 'jose'
import { $fetch } from '@nuxt/test-utils/e2e'
import { describe, expect, it } from 'vitest'
import { setupApp } from './app'
import { bearer, issueCode, login, type Server, type Session, setCookieLine, setCookieValue, tokenRequest } from './requests'
import { jsonClient, ok } from './json-client'
import { startServerProcess } from './server-processes'
import { startUpstashStorage } from './upstash-storage'

const admin = { sub: 'admin', email: 'admin@example.com', name: 'Ada Admin', role: 'admin' }
const server = await setupApp('basic', { NUXT_SVC_AUTH_IMPERSONATION_ENABLED: 'true' })

interface HookCall { hook: string, payload: Record<string, unknown> }
/** Hook calls the fixture recorded since the last call. */
const hooks = (): Promise<HookCall[]> => $fetch<HookCall[]>('/api/test/hooks')

function post(path: string, token: string | undefined, body?: unknown, refreshCookie?: string): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'impersonation-test' }
  if (token) headers.authorization = `Bearer ${token}`
  if (refreshCookie) headers.cookie = `svc-refresh=${refreshCookie}`
  return server.fetch(path, { method: 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) })
}

async function impersonate(requester: Session, targetUserId: string, reason?: string) {
  const res = await post('/auth/impersonate', requester.token, { targetUserId, reason }, requester.refreshCookie)
  return { res, body: await res.json(), cookie: setCookieValue(res, 'svc-refresh') }
}

describe('POST /auth/impersonate', () => {
  it('issues a token for the target with the impersonation context, lifetime and start hook', async () => {
    const requester = await login(server, { ...admin })
    await hooks()
    const before = Date.now()
    const { res, body, cookie } = await impersonate(requester, 'alice', 'Support ticket #42')
    expect(res.status).toBe(200)
    expect(Object.keys(body)).toEqual(['accessToken'])
    const claims = decodeJwt(body.accessToken)
    expect(claims).toMatchObject({ sub: 'alice', email: 'alice@example.com', name: 'Alice', role: 'user', org: 'o1' })
    expect(claims.exp! - claims.iat!).toBe(900)
    const ctx = claims.impersonation as Record<string, unknown>
    expect(ctx).toMatchObject({ originalUserSub: 'admin', originalUserLookupId: 'admin', originalUserEmail: 'admin@example.com', originalUserName: 'Ada Admin', reason: 'Support ticket #42', originalClaims: { role: 'admin' } })
    expect(new Date(ctx.impersonatedAt as string).getTime()).toBeGreaterThanOrEqual(before - 1000)
    expect(ctx.impersonatedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect(cookie).toBeTruthy()
    expect(setCookieLine(res, 'svc-refresh')).toContain('Max-Age=900')

    const calls = await hooks()
    expect(calls.map(c => c.hook)).toEqual(['check', 'fetchTarget', 'start'])
    const [check, fetchTarget, start] = calls
    expect(check!.payload).toMatchObject({ targetUserId: 'alice', reason: 'Support ticket #42', event: 'H3Event', userAgent: 'impersonation-test', requester: { sub: 'admin', role: 'admin' } })
    expect(typeof check!.payload.ip).toBe('string')
    expect(check!.payload.ip).not.toBe('')
    expect(fetchTarget!.payload).toMatchObject({ targetUserId: 'alice', event: 'H3Event', requester: { sub: 'admin' } })
    expect(start!.payload).toMatchObject({ reason: 'Support ticket #42', userAgent: 'impersonation-test', requester: { sub: 'admin' }, targetUser: { sub: 'alice', impersonation: { originalUserSub: 'admin' } }, event: 'H3Event' })
    expect(typeof (start!.payload.timestamp as { date: string }).date).toBe('string')
  })

  it('fills event.context.user with the target and event.context.originalUser with the requester', async () => {
    const requester = await login(server, { ...admin })
    const { body } = await impersonate(requester, 'alice@example.com')
    const res = await server.fetch('/api/whoami', bearer(body.accessToken))
    expect(await res.json()).toEqual({ sub: 'alice', original: { sub: 'admin', email: 'admin@example.com', name: 'Ada Admin' } })
  })

  it('prevents chains: an impersonated token cannot impersonate again (403)', async () => {
    const requester = await login(server, { ...admin })
    const { body, cookie } = await impersonate(requester, 'alice')
    const res = await post('/auth/impersonate', body.accessToken, { targetUserId: 'support' }, cookie)
    expect(res.status).toBe(403)
    expect(await res.json()).toMatchObject({ statusCode: 403, error: 'impersonation_chain' })
  })

  it('answers 403 when canImpersonate says no, 404 for an unknown target, and passes host statuses through', async () => {
    const user = await login(server, { sub: 'alice', role: 'user' })
    const denied = await post('/auth/impersonate', user.token, { targetUserId: 'admin' })
    expect(denied.status).toBe(403)
    expect(await denied.json()).toMatchObject({ error: 'forbidden' })

    const requester = await login(server, { ...admin })
    const missing = await post('/auth/impersonate', requester.token, { targetUserId: 'ghost' })
    expect(missing.status).toBe(404)
    const otherOrg = await post('/auth/impersonate', requester.token, { targetUserId: 'bob' })
    expect(otherOrg.status).toBe(403)
    expect(await otherOrg.json()).toMatchObject({ statusCode: 403, message: 'Target belongs to another organization' })
    const limited = await post('/auth/impersonate', requester.token, { targetUserId: 'too-many' })
    expect(limited.status).toBe(429)
    const support = await login(server, { sub: 'support', role: 'support' })
    const noReason = await post('/auth/impersonate', support.token, { targetUserId: 'alice' })
    expect(noReason.status).toBe(400)
    expect(await noReason.json()).toMatchObject({ statusCode: 400, message: 'A reason is required' })
    const withReason = await post('/auth/impersonate', support.token, { targetUserId: 'alice', reason: 'ticket' })
    expect(withReason.status).toBe(200)
  })

  it('a hook that throws without a status gives a generic 500 without details', async () => {
    const requester = await login(server, { ...admin })
    const res = await post('/auth/impersonate', requester.token, { targetUserId: 'crash' })
    expect(res.status).toBe(500)
    const body = await res.text()
    expect(JSON.parse(body)).toEqual({ statusCode: 500, message: 'Internal server error', error: 'internal_error' })
    expect(body).not.toContain('secret detail')
    expect(server.output()).toContain('check hook crashed with a secret detail')
  })

  it('issues no token when the start audit hook fails', async () => {
    const requester = await login(server, { sub: 'broken-audit', role: 'admin' })
    const res = await post('/auth/impersonate', requester.token, { targetUserId: 'alice' }, requester.refreshCookie)
    expect(res.status).toBe(500)
    expect(setCookieValue(res, 'svc-refresh')).toBeUndefined()
    // The requester's own session is untouched.
    const refresh = await server.fetch('/auth/refresh', { method: 'POST', headers: { cookie: `svc-refresh=${requester.refreshCookie}` } })
    expect(refresh.status).toBe(200)
  })

  it('validates the body and requires a bearer token', async () => {
    const requester = await login(server, { ...admin })
    expect((await post('/auth/impersonate', undefined, { targetUserId: 'alice' })).status).toBe(401)
    for (const body of [{}, { targetUserId: '' }, { targetUserId: 5 }, { targetUserId: 'alice', reason: 'x'.repeat(501) }]) {
      const res = await post('/auth/impersonate', requester.token, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(await res.json()).toMatchObject({ error: 'bad_request' })
    }
  })
})

describe('while impersonating', () => {
  it('refresh answers 403 and the token the requester\'s cookie held is retired', async () => {
    const requester = await login(server, { ...admin })
    const { cookie } = await impersonate(requester, 'alice')
    const res = await server.fetch('/auth/refresh', { method: 'POST', headers: { cookie: `svc-refresh=${cookie}` } })
    expect(res.status).toBe(403)
    expect(await res.json()).toMatchObject({ statusCode: 403, error: 'impersonated_session' })
    const old = await server.fetch('/auth/refresh', { method: 'POST', headers: { cookie: `svc-refresh=${requester.refreshCookie}` } })
    expect(old.status).toBe(401)
  })
})

describe('POST /auth/unimpersonate', () => {
  it('restores the original user with its claims, sets a new refresh cookie and fires the end hook', async () => {
    const requester = await login(server, { ...admin })
    const { body, cookie } = await impersonate(requester, 'alice', 'check')
    await hooks()
    const res = await post('/auth/unimpersonate', body.accessToken, undefined, cookie)
    expect(res.status).toBe(200)
    const restored = await res.json()
    expect(Object.keys(restored)).toEqual(['accessToken'])
    const claims = decodeJwt(restored.accessToken)
    expect(claims).toMatchObject({ sub: 'admin', email: 'admin@example.com', name: 'Ada Admin', role: 'admin', org: 'o1' })
    expect(claims).not.toHaveProperty('impersonation')
    const newCookie = setCookieValue(res, 'svc-refresh')!
    expect(newCookie).toBeTruthy()
    expect(setCookieLine(res, 'svc-refresh')).toContain('Max-Age=604800')
    const refreshed = await server.fetch('/auth/refresh', { method: 'POST', headers: { cookie: `svc-refresh=${newCookie}` } })
    expect(refreshed.status).toBe(200)
    expect(decodeJwt((await refreshed.json()).token)).toMatchObject({ sub: 'admin', role: 'admin' })

    const calls = await hooks()
    expect(calls.map(c => c.hook)).toEqual(['end'])
    expect(calls[0]!.payload).toMatchObject({ restoredUser: { sub: 'admin' }, impersonatedUser: { sub: 'alice', impersonation: { originalUserSub: 'admin' } }, event: 'H3Event', userAgent: 'impersonation-test' })
    expect(typeof (calls[0]!.payload.timestamp as { date: string }).date).toBe('string')
  })

  it('is single use, and the impersonated session dies with it', async () => {
    const requester = await login(server, { ...admin })
    const { body, cookie } = await impersonate(requester, 'alice')
    const results = await Promise.all(Array.from({ length: 10 }, () => post('/auth/unimpersonate', body.accessToken, undefined, cookie)))
    expect(results.filter(r => r.status === 200)).toHaveLength(1)
    const again = await post('/auth/unimpersonate', body.accessToken, undefined, cookie)
    expect([401, 403]).toContain(again.status)
  })

  it('a leaked impersonated token without the browser\'s cookie cannot go back (403)', async () => {
    const requester = await login(server, { ...admin })
    const { body, cookie } = await impersonate(requester, 'alice')
    expect((await post('/auth/unimpersonate', body.accessToken)).status).toBe(403)
    const other = await login(server, { ...admin })
    const mismatch = await post('/auth/unimpersonate', body.accessToken, undefined, other.refreshCookie)
    expect(mismatch.status).toBe(403)
    expect(await mismatch.json()).toMatchObject({ error: 'impersonation_session_mismatch' })
    // The rightful browser still can.
    expect((await post('/auth/unimpersonate', body.accessToken, undefined, cookie)).status).toBe(200)
  })

  it('answers 400 with a normal token and 401 without one or with an expired impersonated token', async () => {
    const requester = await login(server, { ...admin })
    const normal = await post('/auth/unimpersonate', requester.token, undefined, requester.refreshCookie)
    expect(normal.status).toBe(400)
    expect(await normal.json()).toMatchObject({ statusCode: 400, error: 'not_impersonating' })
    expect((await post('/auth/unimpersonate', undefined)).status).toBe(401)

    const short = await startServerProcess({ NUXT_SVC_AUTH_IMPERSONATION_ENABLED: 'true', NUXT_SVC_AUTH_IMPERSONATION_TOKEN_EXPIRATION: '1' })
    try {
      const code = await issueCode(short, admin)
      const token = await (await short.fetch('/auth/token', tokenRequest(code))).json()
      const imp = await short.fetch('/auth/impersonate', { method: 'POST', headers: { 'content-type': 'application/json', 'authorization': `Bearer ${token.token}` }, body: JSON.stringify({ targetUserId: 'alice' }) })
      const { accessToken } = await imp.json()
      expect(decodeJwt(accessToken).exp! - decodeJwt(accessToken).iat!).toBe(1)
      await new Promise(r => setTimeout(r, 7000))
      const res = await short.fetch('/auth/unimpersonate', { method: 'POST', headers: { authorization: `Bearer ${accessToken}`, cookie: `svc-refresh=${setCookieValue(imp, 'svc-refresh')}` } })
      expect(res.status).toBe(401)
    }
    finally {
      await short.stop()
    }
  }, 20_000)
})

describe('the way back continues the requester\'s session', () => {
  const sessionsOf = async (token: string) => (await (await server.fetch('/auth/sessions', bearer(token))).json()) as { sessions: Array<{ id: string, createdAt: string }> }

  it('continues the token\'s own session: no new session, its login time, ended by the owner\'s ending of it', async () => {
    const requester = await login(server, { ...admin })
    const { sid } = decodeJwt(requester.token)
    const before = (await sessionsOf(requester.token)).sessions
    const original = before.find(s => s.id === sid)
    const { body, cookie } = await impersonate(requester, 'alice')
    const back = await post('/auth/unimpersonate', body.accessToken, undefined, cookie)
    expect(back.status).toBe(200)
    const restored = (await back.json()).accessToken as string
    expect(decodeJwt(restored).sid).toBe(sid)
    // No new session: the same ones as before, the token's own with its login time.
    const after = (await sessionsOf(restored)).sessions
    expect(after.map(s => s.id).sort()).toEqual(before.map(s => s.id).sort())
    expect(after.find(s => s.id === sid)!.createdAt).toBe(original!.createdAt)
    // It is the owner's session: its logout ends it.
    const handedOut = setCookieValue(back, 'svc-refresh')!
    expect((await server.fetch('/auth/logout', { method: 'POST', headers: { cookie: `svc-refresh=${handedOut}` } })).status).toBe(200)
    expect((await server.fetch('/auth/refresh', { method: 'POST', headers: { cookie: `svc-refresh=${handedOut}` } })).status).toBe(401)
  })

  it('a bearer alone (a stolen token, no cookie of its session): the way back continues the session, no longer than that token lives', async () => {
    const requester = await login(server, { ...admin })
    const { sid, exp } = decodeJwt(requester.token)
    const before = (await sessionsOf(requester.token)).sessions
    const { body, cookie } = await impersonate({ token: requester.token } as Session, 'alice')
    const back = await post('/auth/unimpersonate', body.accessToken, undefined, cookie)
    expect(back.status).toBe(200)
    const restored = decodeJwt((await back.json()).accessToken)
    expect(restored.sid).toBe(sid)
    expect(restored.exp).toBeLessThanOrEqual(exp!)
    // No new session, and a refresh cookie that ends when the stolen token does (not in 7 days).
    expect((await sessionsOf(requester.token)).sessions.map(s => s.id).sort()).toEqual(before.map(s => s.id).sort())
    const maxAge = Number(/Max-Age=(\d+)/.exec(setCookieLine(back, 'svc-refresh')!)![1])
    expect(maxAge).toBeLessThanOrEqual(exp! - Math.floor(Date.now() / 1000) + 1)
    expect(maxAge).toBeLessThan(3601)
    // The owner's cookie still holds the session, and the owner's logout ends what was handed out.
    const handedOut = setCookieValue(back, 'svc-refresh')!
    const refreshed = await server.fetch('/auth/refresh', { method: 'POST', headers: { cookie: `svc-refresh=${handedOut}` } })
    expect(refreshed.status).toBe(200)
    expect(Number(/Max-Age=(\d+)/.exec(setCookieLine(refreshed, 'svc-refresh')!)![1])).toBeLessThanOrEqual(maxAge)
    expect(decodeJwt((await refreshed.json()).token).exp).toBeLessThanOrEqual(exp!)
    expect((await server.fetch('/auth/logout', { method: 'POST', headers: { cookie: `svc-refresh=${requester.refreshCookie}` } })).status).toBe(200)
    expect((await server.fetch('/auth/refresh', { method: 'POST', headers: { cookie: `svc-refresh=${setCookieValue(refreshed, 'svc-refresh')}` } })).status).toBe(401)
  })

  it('is refused once the requester\'s session has ended, and a token whose session ended cannot start one', async () => {
    const requester = await login(server, { ...admin })
    const { sid } = decodeJwt(requester.token)
    const { body, cookie } = await impersonate(requester, 'alice')
    // Ended meanwhile from elsewhere (the session list of another device, here with the requester's token).
    expect((await server.fetch(`/auth/sessions/${sid}`, { method: 'DELETE', headers: { authorization: `Bearer ${requester.token}` } })).status).toBe(200)
    const back = await post('/auth/unimpersonate', body.accessToken, undefined, cookie)
    expect(back.status).toBe(401)
    expect(await back.json()).toMatchObject({ error: 'session_revoked' })
    expect(setCookieValue(back, 'svc-refresh')).toBeUndefined()
    expect((await post('/auth/impersonate', requester.token, { targetUserId: 'alice' })).status).toBe(401)
  })

  it('a stale token stays stale through impersonation and back: step-up still refuses (client fixture, two-factor)', async () => {
    const app = await startServerProcess({ NUXT_SVC_AUTH_SESSIONS_RECENT_LOGIN: '2s', NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false' }, 'client')
    try {
      const owner = jsonClient(app)
      const start = await owner.get('/api/test/login?user=alice')
      const code = new URL(start.headers.get('location')!, app.url).searchParams.get('code')!
      const { accessToken } = await ok<{ accessToken: string }>(await owner.post('/auth/token', { code }))
      // Fresh, enrolment is allowed; then the login grows older than sessions.recentLogin.
      await new Promise(resolve => setTimeout(resolve, 2500))
      expect((await owner.post('/auth/two-factor/enrol', {}, accessToken)).status).toBe(403)
      // A thief with the stale bearer alone, in a browser of their own: the way back continues the
      // owner's session as old as it was, so step-up still refuses.
      const thief = jsonClient(app)
      const { accessToken: stolen } = await ok<{ accessToken: string }>(await thief.post('/auth/impersonate', { targetUserId: 'bob' }, accessToken))
      const { accessToken: thiefBack } = await ok<{ accessToken: string }>(await thief.post('/auth/unimpersonate', {}, stolen))
      expect(decodeJwt(thiefBack).sid).toBe(decodeJwt(accessToken).sid)
      expect(await ok(await thief.post('/auth/two-factor/enrol', {}, thiefBack), 403)).toMatchObject({ error: 'reauthentication_required' })
      const { token: thiefRefreshed } = await ok<{ token: string }>(await thief.post('/auth/refresh'))
      expect((await thief.post('/auth/two-factor/enrol', {}, thiefRefreshed)).status).toBe(403)
      // The owner, in the browser of the session: the way back continues it, as old as it was.
      const { accessToken: impersonated } = await ok<{ accessToken: string }>(await owner.post('/auth/impersonate', { targetUserId: 'bob' }, accessToken))
      const { accessToken: restored } = await ok<{ accessToken: string }>(await owner.post('/auth/unimpersonate', {}, impersonated))
      expect(decodeJwt(restored).sid).toBe(decodeJwt(accessToken).sid)
      const enrol = await owner.post('/auth/two-factor/enrol', {}, restored)
      expect(enrol.status).toBe(403)
      expect(await enrol.json()).toMatchObject({ error: 'reauthentication_required' })
      // Refreshing what the way back handed out moves no clock either.
      const { token: refreshed } = await ok<{ token: string }>(await owner.post('/auth/refresh'))
      expect((await owner.post('/auth/two-factor/enrol', {}, refreshed)).status).toBe(403)
    }
    finally {
      await app.stop()
    }
  }, 30_000)
})

describe('on Redis over HTTP, across two instances', () => {
  const send = (target: Server, path: string, token: string | undefined, refreshCookie?: string, method = 'POST', body?: unknown) => target.fetch(path, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...(refreshCookie ? { cookie: `svc-refresh=${refreshCookie}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  /** An admin logged in on `on`, impersonating alice from the session's browser. */
  async function impersonatingOn(on: Server) {
    const requester = await login(on, { ...admin })
    const res = await send(on, '/auth/impersonate', requester.token, requester.refreshCookie, 'POST', { targetUserId: 'alice' })
    expect(res.status).toBe(200)
    return { requester, sid: decodeJwt(requester.token).sid as string, accessToken: (await res.json()).accessToken as string, cookie: setCookieValue(res, 'svc-refresh')! }
  }

  it('the way back on another instance, once of many at once, and never undoing a logout made on the other', async () => {
    const storage = await startUpstashStorage()
    const env = { ...storage.env, NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'upstash', NUXT_SVC_AUTH_IMPERSONATION_ENABLED: 'true' }
    const [one, two] = await Promise.all([startServerProcess(env), startServerProcess(env)])
    try {
      const started = await impersonatingOn(one)
      const back = await send(two, '/auth/unimpersonate', started.accessToken, started.cookie)
      expect(back.status).toBe(200)
      expect(decodeJwt((await back.json()).accessToken).sid).toBe(started.sid)
      expect((await send(one, '/auth/refresh', undefined, setCookieValue(back, 'svc-refresh'))).status).toBe(200)

      // 10 at once, split over both: one continues the session.
      const again = await impersonatingOn(two)
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => send(i % 2 ? one : two, '/auth/unimpersonate', again.accessToken, again.cookie)))
      expect(answers.filter(res => res.status === 200)).toHaveLength(1)

      // The requester's session ended on one instance while the way back runs on the other.
      for (let round = 0; round < 4; round++) {
        const racing = await impersonatingOn(one)
        const [way] = await Promise.all([
          send(two, '/auth/unimpersonate', racing.accessToken, racing.cookie),
          send(one, `/auth/sessions/${racing.sid}`, racing.requester.token, undefined, 'DELETE'),
        ])
        expect([200, 401]).toContain(way.status)
        const handedOut = setCookieValue(way, 'svc-refresh')
        if (handedOut) expect((await send(one, '/auth/refresh', undefined, handedOut)).status).toBe(401)
        const observer = await login(two, { ...admin })
        const listed = (await (await two.fetch('/auth/sessions', bearer(observer.token))).json()) as { sessions: Array<{ id: string }> }
        expect(listed.sessions.map(session => session.id)).not.toContain(racing.sid)
      }
    }
    finally {
      await Promise.all([one.stop(), two.stop()])
      await storage.close()
    }
  }, 60_000)
})

describe('disabled', () => {
  it('both endpoints answer 404 when impersonation is off', async () => {
    const off = await startServerProcess()
    try {
      const requester = await login(off, { ...admin })
      for (const path of ['/auth/impersonate', '/auth/unimpersonate']) {
        const res = await off.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', 'authorization': `Bearer ${requester.token}` }, body: JSON.stringify({ targetUserId: 'alice' }) })
        expect(res.status).toBe(404)
        expect(await res.json()).toMatchObject({ statusCode: 404, error: 'not_found' })
      }
    }
    finally {
      await off.stop()
    }
  })
})
