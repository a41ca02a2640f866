import { describe, expect, it } from 'vitest'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { setupApp } from './app'
import { bearer, cookie, issueCode, json, login, setCookieLine, setCookieValue, tokenRequest } from './requests'
import { startServerProcess } from './server-processes'

const server = await setupApp('basic', { NUXT_SVC_AUTH_TOKEN_REFRESH_REUSE_GRACE_PERIOD: '1' })

describe('POST /auth/token', () => {
  it('exchanges a code for both token shapes and sets the refresh cookie with the default attributes', async () => {
    const code = await issueCode(server, { sub: 'alice', email: 'alice@example.com', name: 'Zoë Åländ', role: 'admin' })
    const res = await server.fetch('/auth/token', tokenRequest(code))
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const body = await res.json()
    expect(body).toMatchObject({ expiresIn: 3600, tokenType: 'Bearer' })
    expect(body.token).toBe(body.accessToken)
    expect(decodeProtectedHeader(body.token)).toMatchObject({ alg: 'HS256', typ: 'at+jwt' })
    const claims = decodeJwt(body.token)
    expect(claims).toMatchObject({ sub: 'alice', email: 'alice@example.com', name: 'Zoë Åländ', provider: 'test', role: 'admin', iss: 'svc', aud: '' })
    expect(claims.exp! - claims.iat!).toBe(3600)
    const line = setCookieLine(res, 'svc-refresh')!
    expect(line).toMatch(/^svc-refresh=[\w-]{40,};/)
    expect(line).toContain('Max-Age=604800')
    expect(line).toContain('Path=/')
    expect(line).toContain('HttpOnly')
    expect(line).toContain('Secure')
    expect(line).toContain('SameSite=Lax')
  })

  it('refuses a used code with 401 and the stable error shape', async () => {
    const code = await issueCode(server)
    expect((await server.fetch('/auth/token', tokenRequest(code))).status).toBe(200)
    const again = await server.fetch('/auth/token', tokenRequest(code))
    expect(again.status).toBe(401)
    expect(await again.json()).toEqual({ statusCode: 401, message: 'Invalid or expired authorization code', error: 'invalid_code' })
  })

  it('answers 401 for an unknown code and 400 for bad bodies, never 500', async () => {
    expect((await server.fetch('/auth/token', json({ code: 'nope' }))).status).toBe(401)
    for (const body of [{}, { code: '' }, { code: 42 }, { code: 'x'.repeat(600) }, []]) {
      const res = await server.fetch('/auth/token', json(body))
      expect(res.status, JSON.stringify(body)).toBe(400)
      const err = await res.json()
      expect(err.statusCode).toBe(400)
      expect(err.error).toBe('bad_request')
      expect(err).not.toHaveProperty('stack')
    }
    const malformed = await server.fetch('/auth/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"code":' })
    expect(malformed.status).toBe(400)
    expect(await malformed.json()).toEqual({ statusCode: 400, message: 'Request body must be valid JSON', error: 'bad_request' })
    const empty = await server.fetch('/auth/token', { method: 'POST' })
    expect(empty.status).toBe(400)
  })

  it('refuses cross-site requests without consuming the code', async () => {
    const code = await issueCode(server)
    const res = await server.fetch('/auth/token', tokenRequest(code, { 'sec-fetch-site': 'cross-site' }))
    expect(res.status).toBe(403)
    expect((await server.fetch('/auth/token', tokenRequest(code))).status).toBe(200)
  })
})

describe('GET /api/user/me', () => {
  it('returns the claims of a valid bearer token', async () => {
    const session = await login(server, { sub: 'bob', name: 'Bob', email: 'bob@example.com', picture: 'https://img.example/b.png' })
    const res = await server.fetch('/api/user/me', bearer(session.token))
    expect(res.status).toBe(200)
    const me = await res.json()
    expect(me).toMatchObject({ sub: 'bob', name: 'Bob', email: 'bob@example.com', picture: 'https://img.example/b.png', provider: 'test', role: 'user' })
    expect(typeof me.iat).toBe('number')
    expect(typeof me.exp).toBe('number')
  })

  it('answers 401 without or with a bad token', async () => {
    for (const init of [{}, bearer('garbage'), { headers: { authorization: 'Basic abc' } }]) {
      const res = await server.fetch('/api/user/me', init)
      expect(res.status).toBe(401)
      expect(await res.json()).toMatchObject({ statusCode: 401, error: 'unauthorized' })
    }
  })

  it('never accepts the refresh cookie as authentication', async () => {
    const session = await login(server)
    const res = await server.fetch('/api/user/me', { headers: { cookie: `svc-refresh=${session.refreshCookie}` } })
    expect(res.status).toBe(401)
    const protectedRes = await server.fetch('/api/protected/hello', { headers: { cookie: `svc-refresh=${session.refreshCookie}` } })
    expect(protectedRes.status).toBe(401)
  })
})

describe('POST /auth/refresh', () => {
  it('rotates the refresh token and returns a new access token with fresh claims', async () => {
    const session = await login(server, { sub: 'carol', name: 'Carol', role: 'editor' })
    const res = await server.fetch('/auth/refresh', cookie(session.refreshCookie!))
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toMatchObject({ success: true, expiresIn: 3600 })
    expect(body.token).toBe(body.accessToken)
    expect(decodeJwt(body.token)).toMatchObject({ sub: 'carol', name: 'Carol', role: 'editor', sid: decodeJwt(session.token).sid })
    const next = setCookieValue(res, 'svc-refresh')
    expect(next).toBeTruthy()
    expect(next).not.toBe(session.refreshCookie)
    expect((await server.fetch('/auth/refresh', cookie(next!))).status).toBe(200)
  })

  it('treats reuse of a rotated token after the grace period as theft and revokes the session', async () => {
    const session = await login(server)
    const first = await server.fetch('/auth/refresh', cookie(session.refreshCookie!))
    const rotated = setCookieValue(first, 'svc-refresh')!
    // Within the grace period (1 s here) a second tab may still use the old token: it gets the
    // same successor, so the session never has two live tokens.
    const tab = await server.fetch('/auth/refresh', cookie(session.refreshCookie!))
    expect(tab.status).toBe(200)
    expect(setCookieValue(tab, 'svc-refresh')).toBe(rotated)
    await new Promise(r => setTimeout(r, 1300))
    const replay = await server.fetch('/auth/refresh', cookie(session.refreshCookie!))
    expect(replay.status).toBe(401)
    expect(await replay.json()).toMatchObject({ error: 'refresh_token_reused' })
    // The whole family is gone, including the token the legitimate user holds.
    expect((await server.fetch('/auth/refresh', cookie(rotated))).status).toBe(401)
  })

  it('answers 401 for a missing, unknown or garbage cookie and clears it', async () => {
    expect((await server.fetch('/auth/refresh', { method: 'POST' })).status).toBe(401)
    const res = await server.fetch('/auth/refresh', cookie('unknown-token'))
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({ statusCode: 401, message: 'Invalid or expired refresh token', error: 'invalid_refresh_token' })
    expect(setCookieValue(res, 'svc-refresh')).toBe('')
    expect((await server.fetch('/auth/refresh', cookie('%%%;;;'.repeat(200)))).status).toBe(401)
  })
})

describe('POST /auth/logout', () => {
  it('revokes the stored token, deletes the cookie and is idempotent', async () => {
    const session = await login(server)
    const res = await server.fetch('/auth/logout', cookie(session.refreshCookie!))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ success: true })
    const line = setCookieLine(res, 'svc-refresh')!
    expect(line).toMatch(/Max-Age=0/)
    expect((await server.fetch('/auth/refresh', cookie(session.refreshCookie!))).status).toBe(401)
    expect((await server.fetch('/auth/logout', cookie(session.refreshCookie!))).status).toBe(200)
    expect((await server.fetch('/auth/logout', { method: 'POST' })).status).toBe(200)
  })
})

describe('authorization code expiry', () => {
  it('refuses a code after authCode.expiresIn seconds', async () => {
    const short = await startServerProcess({ NUXT_SVC_AUTH_AUTH_CODE_EXPIRES_IN: '1' })
    try {
      const code = await issueCode(short)
      await new Promise(r => setTimeout(r, 1200))
      const res = await short.fetch('/auth/token', tokenRequest(code))
      expect(res.status).toBe(401)
      const fresh = await issueCode(short)
      expect((await short.fetch('/auth/token', tokenRequest(fresh))).status).toBe(200)
    }
    finally {
      await short.stop()
    }
  })
})

describe('configuration from the environment', () => {
  it('applies cookie options and token lifetime from NUXT_SVC_AUTH_*', async () => {
    const custom = await startServerProcess({
      NUXT_SVC_AUTH_TOKEN_REFRESH_COOKIE_COOKIE_NAME: 'my-rt',
      // A duration in either form, read once when the server starts.
      NUXT_SVC_AUTH_TOKEN_REFRESH_COOKIE_MAX_AGE: '1h',
      NUXT_SVC_AUTH_TOKEN_REFRESH_COOKIE_SAME_SITE: 'strict',
      NUXT_SVC_AUTH_TOKEN_REFRESH_COOKIE_PATH: '/auth',
      // A cookie under /auth reaches the auth endpoints only: no SSR token for the pages.
      NUXT_SVC_AUTH_ENABLE_SSR: 'false',
      NUXT_SVC_AUTH_TOKEN_EXPIRES_IN: '15m',
      NUXT_SVC_AUTH_TOKEN_ISSUER: 'https://issuer.example',
      NUXT_SVC_AUTH_TOKEN_AUDIENCE: 'my-api',
    })
    try {
      const session = await login(custom, undefined, 'my-rt')
      const line = setCookieLine(session.response, 'my-rt')!
      expect(line).toContain('Max-Age=3600')
      expect(line).toContain('SameSite=Strict')
      expect(line).toContain('Path=/auth')
      expect(session.body.expiresIn).toBe(900)
      expect(decodeJwt(session.token)).toMatchObject({ iss: 'https://issuer.example', aud: 'my-api' })
      expect((await custom.fetch('/api/user/me', bearer(session.token))).status).toBe(200)
      expect((await custom.fetch('/auth/refresh', cookie(session.refreshCookie!, 'my-rt'))).status).toBe(200)
      // A token of another issuer/audience configuration is refused.
      const other = await login(server)
      expect((await custom.fetch('/api/user/me', bearer(other.token))).status).toBe(401)
    }
    finally {
      await custom.stop()
    }
  })
})
