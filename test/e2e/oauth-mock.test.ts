import { describe, expect, it } from 'vitest'
import { codeOf, exchange, expectLoginError, finishLogin, startLogin } from './oauth-support'
import { request } from 'node:http'
import { setupApp } from './app'
import { json, tokenRequest } from './requests'
import { startServerProcess } from './server-processes'

const server = await setupApp('oauth', { NUXT_SVC_AUTH_PROVIDERS_MOCK_ENABLE_IN_PRODUCTION: 'true' })

/** The browser's trip through the mock provider: /auth/mock → /mock/authorize → /auth/mock?code. */
async function mockLogin(query = '') {
  const started = await startLogin(server, `/auth/mock${query}`)
  expect(started.authorizeUrl.origin).toBe(server.url)
  expect(started.authorizeUrl.pathname).toBe('/mock/authorize')
  const authorize = await server.fetch(`${started.authorizeUrl.pathname}${started.authorizeUrl.search}`)
  expect(authorize.status).toBe(302)
  const callback = new URL(authorize.headers.get('location')!, server.url)
  expect(callback.origin).toBe(server.url)
  return { started, callback, res: await finishLogin(server, callback, started.cookies) }
}

describe('mock provider login', () => {
  it('logs in the default user through the same flow as a real provider', async () => {
    const { started, res } = await mockLogin()
    expect(started.authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256')
    expect(started.authorizeUrl.searchParams.get('client_id')).toBe('mock-client')
    const { me } = await exchange(server, codeOf(res))
    expect(me).toMatchObject({ sub: 'mock:mock-user', provider: 'mock', email: 'user@example.com', name: 'Una User', picture: 'https://img.example/una.png', role: 'user' })
  })

  it('picks the user by index, sub or email; extra keys of a mock user become claims', async () => {
    const byIndex = await exchange(server, codeOf((await mockLogin('?user=0')).res))
    expect(byIndex.me).toMatchObject({ sub: 'mock:mock-admin', role: 'admin', team: 'core', email: 'admin@example.com' })
    const bySub = await exchange(server, codeOf((await mockLogin('?user=mock-guest')).res))
    expect(bySub.me).toMatchObject({ sub: 'mock:mock-guest', role: 'guest' })
    const byEmail = await exchange(server, codeOf((await mockLogin('?user=guest%40example.com')).res))
    expect(byEmail.me).toMatchObject({ sub: 'mock:mock-guest', name: 'Gus Guest' })
  })

  it('an unknown user and a simulated provider error end on the error page without a code', async () => {
    const unknown = expectLoginError((await mockLogin('?user=nobody')).res, 'invalid_request')
    expect(unknown.searchParams.get('error_description')).toBe('Unknown mock user')
    const denied = await mockLogin('?mock_error=access_denied')
    expect(denied.callback.searchParams.get('error')).toBe('access_denied')
    expectLoginError(denied.res, 'access_denied')
  })

  it('accepts `redirect` only as a same-origin path', async () => {
    const refused = [
      '//evil.example',
      '/\\evil.example',
      '\\\\evil.example',
      'https://evil.example/x',
      'evil.example',
      'javascript:alert(1)',
      '%2F%2Fevil.example',
      '/%2F%2Fevil.example',
      '/%252F%252Fevil.example',
      '/%5Cevil.example',
      '/%09/evil.example',
      '/\t/evil.example',
    ]
    for (const value of refused) {
      const { res } = await mockLogin(`?redirect=${encodeURIComponent(value)}`)
      const { body } = await exchange(server, codeOf(res))
      expect(body.redirect, value).toBeUndefined()
    }
    for (const value of ['/dashboard', '/a/b?tab=2#top', '/caf%C3%A9']) {
      const { res } = await mockLogin(`?redirect=${encodeURIComponent(value)}`)
      const { body } = await exchange(server, codeOf(res))
      expect(body.redirect).toBe(value)
    }
  })
})

describe('login CSRF and code injection', () => {
  it('one login\'s callback with another login\'s cookies is refused at the state check', async () => {
    const a = await startLogin(server, '/auth/mock?user=0')
    const b = await startLogin(server, '/auth/mock?user=1')
    expect(a.cookies['__Host-svc-oauth-state']).not.toBe(b.cookies['__Host-svc-oauth-state'])
    const authorize = await server.fetch(`${a.authorizeUrl.pathname}${a.authorizeUrl.search}`)
    const callback = new URL(authorize.headers.get('location')!, server.url)
    // The victim's browser (login B's cookies) sent to the attacker's callback (login A).
    expectLoginError(await finishLogin(server, callback, b.cookies), 'invalid_state')
    // Login A's own browser is not affected by the refused attempt.
    await exchange(server, codeOf(await finishLogin(server, callback, a.cookies)))
  })

  it('cookie tossing: the attacker\'s state and verifier planted in a victim\'s browser do not log the victim in as the attacker', async () => {
    // The attacker starts a login in their own browser and stops at the callback URL.
    const attacker = await startLogin(server, '/auth/mock?user=1')
    const authorize = await server.fetch(`${attacker.authorizeUrl.pathname}${attacker.authorizeUrl.search}`)
    const callback = new URL(authorize.headers.get('location')!, server.url)
    // The victim's browser holds the attacker's login cookies but not the attacker's browser
    // binding (the __Host- code cookie, which no other host can set). Even with the state cookies
    // under this host's own names, which a sibling subdomain cannot plant either, it is refused.
    const { '__Host-svc-code': _binding, ...planted } = attacker.cookies
    const res = await finishLogin(server, callback, planted)
    expectLoginError(res, 'invalid_state')
    expect(res.headers.getSetCookie().some(line => line.startsWith('__Host-svc-code=') && !/Max-Age=0/.test(line))).toBe(false)
    // A victim with a binding of their own (an earlier visit) is refused the same way.
    const own = await startLogin(server, '/auth/mock?user=0')
    expectLoginError(await finishLogin(server, callback, { ...planted, '__Host-svc-code': own.cookies['__Host-svc-code'] }), 'invalid_state')
  })

  it('the code is bound to the browser that finished the login: another client gets 401 and the code is burnt', async () => {
    const { res } = await mockLogin()
    const code = codeOf(res)
    const binding = res.headers.getSetCookie().find(line => line.startsWith('__Host-svc-code='))
    expect(binding).toMatch(/^__Host-svc-code=[\w-]{43}; Max-Age=300; Path=\/; HttpOnly; Secure; SameSite=Lax$/)
    const stranger = await server.fetch('/auth/token', json({ code }))
    expect(stranger.status).toBe(401)
    expect(await stranger.json()).toEqual({ statusCode: 401, message: 'This authorization code was issued to another browser', error: 'code_binding_mismatch' })
    const owner = await server.fetch('/auth/token', tokenRequest(code))
    expect(owner.status).toBe(401)
    expect(await owner.json()).toMatchObject({ error: 'invalid_code' })
    expect(server.output()).toMatch(/\[svc-auth:security\] code\.refused[\s\S]*other_browser/)
  })
})

describe('URLs never built from the Host header', () => {
  const getWithHost = (path: string, host: string) => new Promise<{ status: number, location?: string }>((resolve, reject) => {
    const url = new URL(server.url)
    const req = request({ host: url.hostname, port: url.port, path, headers: { host } }, (res) => {
      res.resume()
      resolve({ status: res.statusCode!, location: res.headers.location })
    })
    req.on('error', reject)
    req.end()
  })

  it('without a public URL the mock login sends the browser to relative paths only', async () => {
    const started = await getWithHost('/auth/mock', 'evil.example')
    expect(started.status).toBe(302)
    expect(started.location).toMatch(/^\/mock\/authorize\?/)
    const params = new URL(started.location!, 'http://placeholder.invalid').searchParams
    expect(params.get('redirect_uri')).toBe('/auth/mock')
    expect(started.location).not.toContain('evil.example')
  })

  it('with svcAuth.publicUrl the mock login uses it, whatever the Host header says', async () => {
    const configured = await startServerProcess({ NUXT_SVC_AUTH_PROVIDERS_MOCK_ENABLE_IN_PRODUCTION: 'true', NUXT_SVC_AUTH_PUBLIC_URL: 'https://app.example.com' }, 'oauth')
    try {
      const res = await configured.fetch('/auth/mock')
      const location = new URL(res.headers.get('location')!)
      expect(location.origin).toBe('https://app.example.com')
      expect(location.searchParams.get('redirect_uri')).toBe('https://app.example.com/auth/mock')
      const authorize = await configured.fetch(`${location.pathname}${location.search}`)
      expect(new URL(authorize.headers.get('location')!).origin).toBe('https://app.example.com')
    }
    finally {
      await configured.stop()
    }
  })
})

describe('mock provider endpoints', () => {
  /** An authorization code of the mock provider for a verifier, and the redirect URI it is bound to. */
  async function mockCode(verifier = 'v'.repeat(43)) {
    const { createHash } = await import('node:crypto')
    const redirectUri = '/auth/mock'
    const url = new URL('/mock/authorize', server.url)
    url.search = new URLSearchParams({ response_type: 'code', client_id: 'mock-client', redirect_uri: redirectUri, state: 's1', code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256', login_hint: '0' }).toString()
    const res = await server.fetch(`${url.pathname}${url.search}`)
    const location = new URL(res.headers.get('location')!, server.url)
    expect(res.headers.get('location')).toMatch(/^\/auth\/mock\?/)
    expect(location.searchParams.get('state')).toBe('s1')
    return { code: location.searchParams.get('code')!, redirectUri, verifier }
  }

  const form = (body: Record<string, string>, headers: Record<string, string> = {}): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(body).toString(),
  })
  const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` })

  it('issues a token once for the right client, redirect URI and PKCE verifier; userinfo answers the user', async () => {
    const { code, redirectUri, verifier } = await mockCode()
    const grant = { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier }
    const res = await server.fetch('/mock/token', form(grant, basic('mock-client', 'mock-secret')))
    expect(res.status).toBe(200)
    const tokens = await res.json()
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600 })
    const info = await server.fetch('/mock/userinfo', { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(await info.json()).toEqual({ sub: 'mock-admin', email: 'admin@example.com', name: 'Ada Admin', role: 'admin', team: 'core' })
    const replay = await server.fetch('/mock/token', form(grant, basic('mock-client', 'mock-secret')))
    expect(replay.status).toBe(400)
    expect(await replay.json()).toMatchObject({ error: 'invalid_grant' })
  })

  it('refuses wrong client credentials, a wrong verifier, another redirect URI and non-form bodies', async () => {
    const a = await mockCode()
    const wrongSecret = await server.fetch('/mock/token', form({ grant_type: 'authorization_code', code: a.code, redirect_uri: a.redirectUri, code_verifier: a.verifier }, basic('mock-client', 'nope')))
    expect(wrongSecret.status).toBe(401)
    expect(await wrongSecret.json()).toMatchObject({ error: 'invalid_client' })

    const b = await mockCode()
    const wrongVerifier = await server.fetch('/mock/token', form({ grant_type: 'authorization_code', code: b.code, redirect_uri: b.redirectUri, code_verifier: 'w'.repeat(43), client_id: 'mock-client', client_secret: 'mock-secret' }))
    expect(wrongVerifier.status).toBe(400)
    expect(await wrongVerifier.json()).toMatchObject({ error: 'invalid_grant', message: 'PKCE verification failed' })

    const c = await mockCode()
    const otherRedirect = await server.fetch('/mock/token', form({ grant_type: 'authorization_code', code: c.code, redirect_uri: `${server.url}/elsewhere`, code_verifier: c.verifier }, basic('mock-client', 'mock-secret')))
    expect(otherRedirect.status).toBe(400)

    const jsonBody = await server.fetch('/mock/token', json({ grant_type: 'authorization_code' }))
    expect(jsonBody.status).toBe(400)
    expect((await server.fetch('/mock/token', form({}, basic('mock-client', 'mock-secret')))).status).toBe(400)
  })

  it('authorize refuses unknown clients, foreign redirect URIs and requests without PKCE', async () => {
    const base = { response_type: 'code', client_id: 'mock-client', redirect_uri: '/auth/mock', state: 's' }
    const query = (q: Record<string, string>) => `/mock/authorize?${new URLSearchParams(q)}`
    for (const redirectUri of ['https://evil.example/cb', `${server.url}/auth/mock`, '//evil.example/cb', '/\\evil.example']) {
      const foreign = await server.fetch(query({ ...base, redirect_uri: redirectUri, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' }))
      expect(foreign.status, redirectUri).toBe(400)
      expect(foreign.headers.get('location')).toBeNull()
    }
    expect((await server.fetch(query({ ...base, client_id: 'other' }))).status).toBe(400)
    const noPkce = await server.fetch(query(base))
    expect(new URL(noPkce.headers.get('location')!, server.url).searchParams.get('error')).toBe('invalid_request')
  })

  it('userinfo refuses a missing or unknown token with 401 and a Bearer challenge', async () => {
    for (const init of [{}, { headers: { authorization: 'Bearer unknown-token' } }]) {
      const res = await server.fetch('/mock/userinfo', init)
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/)
    }
  })

  it('warns loudly at start when enabled in production', () => {
    expect(server.output()).toMatch(/mock login provider is ENABLED IN PRODUCTION/)
  })
})

describe('mock provider in production', () => {
  it('is absent (404) without enableInProduction, its login cookies unset', async () => {
    const prod = await startServerProcess({}, 'oauth')
    try {
      const login = await prod.fetch('/auth/mock?user=0')
      expect(login.status).toBe(404)
      expect(login.headers.getSetCookie()).toEqual([])
      expect((await prod.fetch('/mock/authorize?client_id=mock-client&redirect_uri=x')).status).toBe(404)
      expect((await prod.fetch('/mock/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code' })).status).toBe(404)
      expect((await prod.fetch('/mock/userinfo', { headers: { authorization: 'Bearer anything' } })).status).toBe(404)
      expect(prod.output()).not.toMatch(/ENABLED IN PRODUCTION/)
      // Other providers are unaffected (this one cannot reach its issuer here: an error redirect, not a 500).
      expectLoginError(await prod.fetch('/auth/acme'), 'provider_unavailable')
    }
    finally {
      await prod.stop()
    }
  })
})
