import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeJwt } from 'jose'
import { freePort, issuerAt, startCredentialSwapProxy, startGitHubStandIn, startOidcServer, type OidcServer } from './oidc-server'
import { codeOf, exchange, expectLoginError, finishLogin, startLogin, takeEvents, visitProvider } from './oauth-support'
import { setupApp } from './app'
import { CookieJar } from '../helpers/cookie-jar'

let oidc: OidcServer
let second: OidcServer
const closers: Array<() => Promise<void>> = []

const accounts = {
  alice: { email: 'alice@example.com', email_verified: true, name: 'Alice Liddell', picture: 'https://img.example/alice.png' },
  bob: { email: 'bob@example.com', email_verified: false, name: 'Bob Builder' },
  linked: { email: 'linked@example.com', email_verified: true, name: 'Linda Linked' },
  blocked: { email: 'blocked@example.com', email_verified: true, name: 'Blake Blocked' },
}

// The providers listen on ports chosen before the app starts: its configuration points at them.
const [opPort, proxyPort, githubPort, secondPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()])
const op = issuerAt(opPort)
// auth0's provider has an issuer of its own (mix-up between two providers).
const op2 = issuerAt(secondPort)
const proxyUrl = `http://127.0.0.1:${proxyPort}/token`
const github = `http://127.0.0.1:${githubPort}`
const server = await setupApp('oauth', {
  NUXT_SVC_AUTH_PROVIDERS_GOOGLE_ISSUER: op,
  NUXT_SVC_AUTH_PROVIDERS_AUTH0_ISSUER: op2,
  NUXT_SVC_AUTH_PROVIDERS_MICROSOFT_ISSUER: op,
  NUXT_SVC_AUTH_PROVIDERS_GITHUB: JSON.stringify({ authorizationUrl: `${github}/login/oauth/authorize`, tokenUrl: `${github}/login/oauth/access_token`, apiUrl: github }),
  NUXT_SVC_AUTH_PROVIDERS_CUSTOM: JSON.stringify([
    { name: 'acme', clientId: 'acme-client', clientSecret: 'acme-secret', issuer: op },
    { name: 'rogue', clientId: 'rogue-client', clientSecret: 'rogue-secret', issuer: op, tokenUrl: proxyUrl },
  ]),
})

beforeAll(async () => {
  const redirect = (name: string) => [`${server.url}/auth/${name}`]
  oidc = await startOidcServer({
    port: opPort,
    accounts,
    clients: [
      { client_id: 'google-client', client_secret: 'google-secret', redirect_uris: redirect('google') },
      { client_id: 'microsoft-client', client_secret: 'microsoft-secret', redirect_uris: redirect('microsoft') },
      { client_id: 'acme-client', client_secret: 'acme-secret', redirect_uris: redirect('acme') },
      { client_id: 'rogue-client', client_secret: 'rogue-secret', redirect_uris: redirect('rogue') },
      { client_id: 'other-client', client_secret: 'other-secret', redirect_uris: redirect('rogue') },
    ],
  })
  closers.push(() => oidc.close())
  second = await startOidcServer({
    port: secondPort,
    accounts,
    clients: [{ client_id: 'auth0-client', client_secret: 'auth0-secret', redirect_uris: redirect('auth0'), token_endpoint_auth_method: 'client_secret_post' }],
  })
  closers.push(() => second.close())
  const proxy = await startCredentialSwapProxy({ port: proxyPort, target: `${op}/token`, basicAuth: Buffer.from('other-client:other-secret').toString('base64') })
  closers.push(() => proxy.close())
  const gh = await startGitHubStandIn({
    port: githubPort,
    clientId: 'github-client',
    clientSecret: 'github-secret',
    users: {
      octo: {
        profile: { id: 583231, login: 'octocat', name: null, email: null, avatar_url: 'https://avatars.example/583231', html_url: 'https://github.example/octocat' },
        emails: [
          { email: 'old@example.com', primary: false, verified: true },
          { email: 'unverified@example.com', primary: false, verified: false },
          { email: 'octo@example.com', primary: true, verified: true },
        ],
      },
      publicmail: {
        profile: { id: 42, login: 'pub', name: 'Pat Public', email: 'pat@example.com' },
        emails: [{ email: 'primary@example.com', primary: true, verified: true }, { email: 'pat@example.com', primary: false, verified: true }],
      },
    },
  })
  closers.push(() => gh.close())
})

afterAll(async () => {
  for (const close of closers.reverse()) await close()
})

/** A whole login through the provider for `path`; `account` picks the provider's user. */
async function loginThrough(path: string, account?: string) {
  const started = await startLogin(server, path)
  if (account) started.authorizeUrl.searchParams.set('login_hint', account)
  const callback = await visitProvider(started.authorizeUrl, server.url)
  const res = await finishLogin(server, callback, started.cookies)
  return { started, callback, res }
}

describe('login through a real OpenID Connect provider', () => {
  it('custom provider by discovery: full login to /api/user/me with static provider claims', async () => {
    const { started, res } = await loginThrough('/auth/acme?redirect=/projects%3Ftab%3D2', 'alice')
    const params = started.authorizeUrl.searchParams
    expect(started.authorizeUrl.origin).toBe(oidc.issuer)
    expect(params.get('client_id')).toBe('acme-client')
    expect(params.get('redirect_uri')).toBe(`${server.url}/auth/acme`)
    expect(params.get('response_type')).toBe('code')
    expect(params.get('scope')).toBe('openid email profile')
    expect(params.get('code_challenge_method')).toBe('S256')
    expect(params.get('code_challenge')).toMatch(/^[\w-]{43}$/)
    expect(params.get('state')).toBe(started.cookies['__Host-svc-oauth-state'])
    expect(params.get('nonce')).toBe(started.cookies['__Host-svc-oauth-nonce'])
    const line = started.response.headers.getSetCookie().find(l => l.startsWith('__Host-svc-oauth-verifier='))!
    expect(line).toMatch(/Max-Age=600/)
    expect(line).toMatch(/Path=\/(;|$)/)
    expect(line).toMatch(/HttpOnly/)
    expect(line).toMatch(/SameSite=Lax/)
    // Neither the verifier nor the nonce travel in the URL (only the hash of the verifier does).
    expect(started.authorizeUrl.href).not.toContain(started.cookies['__Host-svc-oauth-verifier'])

    const { body, me } = await exchange(server, codeOf(res))
    expect(body.redirect).toBe('/projects?tab=2')
    expect(me).toMatchObject({
      sub: 'acme:alice',
      provider: 'acme',
      email: 'alice@example.com',
      name: 'Alice Liddell',
      picture: 'https://img.example/alice.png',
      plan: 'pro',
      via: 'acme-static',
      role: 'user',
      persisted: true,
    })
    // The login cookies are gone after the callback.
    expect(res.headers.getSetCookie().filter(l => l.startsWith('__Host-svc-oauth-state=')).join()).toMatch(/Max-Age=0/)
  })

  it('google (host route): claims from a callback of user and tokens, then the global claims', async () => {
    await takeEvents(server)
    const { res } = await loginThrough('/auth/google', 'alice')
    const { me, body } = await exchange(server, codeOf(res))
    expect(body.redirect).toBeUndefined()
    expect(me).toMatchObject({ sub: 'google:alice', provider: 'google', email: 'alice@example.com', via: 'google-callback', hasIdToken: true, role: 'user', persisted: true })
    expect(decodeJwt(body.token as string).sub).toBe('google:alice')
  })

  it('runs handlers and hooks in order with their payloads', async () => {
    await takeEvents(server)
    const { res } = await loginThrough('/auth/google', 'alice')
    codeOf(res)
    const events = await takeEvents(server)
    expect(events.map(e => e.name)).toEqual([
      'google.onUserInfo',
      'global.onUserInfo',
      'hook.svc:userInfo',
      'global.onUserPersist',
      'google.customClaims',
      'global.customClaims',
      'google.onSuccess',
      'hook.svc:success',
    ])
    const byName = Object.fromEntries(events.map(e => [e.name, e.data]))
    expect(byName['google.onUserInfo']).toMatchObject({
      provider: 'google',
      hasEvent: true,
      tokenKeys: ['access_token', 'expires_in', 'id_token', 'scope'],
      user: { sub: 'alice', email: 'alice@example.com', emailVerified: true, name: 'Alice Liddell' },
    })
    // The provider's onUserInfo result reaches the global one.
    expect(byName['global.onUserInfo']).toEqual({ sub: 'alice', provider: 'google', fromProviderHandler: true, hasAccessToken: true })
    expect(byName['hook.svc:userInfo']).toMatchObject({ sub: 'alice', provider: 'google', hasEvent: true })
    // onUserPersist sees the provider-qualified subject.
    expect(byName['global.onUserPersist']).toEqual({ sub: 'google:alice', email: 'alice@example.com', provider: 'google', hasEvent: true })
    expect(byName['hook.svc:success']).toEqual({ sub: 'google:alice', provider: 'google', tokenKeys: ['access_token', 'expires_in', 'id_token', 'scope'] })
    expect(byName['google.onSuccess']).toEqual({ sub: 'google:alice', provider: 'google' })
  })

  it('auth0 and microsoft (automatic routes) with their endpoints pointed at the provider', async () => {
    const auth0 = await loginThrough('/auth/auth0', 'bob')
    expect(auth0.started.authorizeUrl.searchParams.get('audience')).toBe('https://api.example.com')
    // auth0 authenticates with client_secret_post, which is all this client accepts.
    const a = await exchange(server, codeOf(auth0.res))
    expect(a.me).toMatchObject({ sub: 'auth0:bob', provider: 'auth0', email: 'bob@example.com', name: 'Bob Builder' })

    const microsoft = await loginThrough('/auth/microsoft', 'alice')
    const m = await exchange(server, codeOf(microsoft.res))
    expect(m.me).toMatchObject({ sub: 'microsoft:alice', provider: 'microsoft', email: 'alice@example.com' })
  })

  it('an id returned by onUserPersist becomes the subject, and its fields reach the claims', async () => {
    const { res } = await loginThrough('/auth/acme', 'linked')
    const { me } = await exchange(server, codeOf(res))
    expect(me).toMatchObject({ sub: 'user-42', provider: 'acme', role: 'editor', email: 'linked@example.com' })
  })

  it('a handler that throws fails the login: onError, error redirect, no code', async () => {
    await takeEvents(server)
    const { res } = await loginThrough('/auth/google', 'blocked')
    const location = expectLoginError(res, 'login_failed')
    expect(location.searchParams.get('error_description')).toBe('This account is blocked')
    const events = await takeEvents(server)
    expect(events.at(-1)).toEqual({ name: 'google.onError', data: { provider: 'google', error: 'login_failed', errorDescription: 'This account is blocked', stage: 'login', hasEvent: true } })
    expect(events.map(e => e.name)).not.toContain('hook.svc:success')
  })
})

describe('provider errors and tampering', () => {
  it('error=access_denied from the provider: onError, then the error page with the provider error', async () => {
    await takeEvents(server)
    const { callback, res } = await loginThrough('/auth/google', 'deny')
    expect(callback.searchParams.get('error')).toBe('access_denied')
    const location = expectLoginError(res, 'access_denied')
    expect(location.searchParams.get('error_description')).toBe('The user refused')
    expect(await takeEvents(server)).toEqual([
      { name: 'google.onError', data: { provider: 'google', error: 'access_denied', errorDescription: 'The user refused', stage: 'provider', hasEvent: true } },
    ])
  })

  it('a tampered state is refused before any exchange', async () => {
    const started = await startLogin(server, '/auth/google')
    const callback = await visitProvider(started.authorizeUrl, server.url)
    callback.searchParams.set('state', `${callback.searchParams.get('state')}x`)
    expectLoginError(await finishLogin(server, callback, started.cookies), 'invalid_state')
  })

  it('a callback without the state cookie (another browser) is refused', async () => {
    const started = await startLogin(server, '/auth/acme')
    const callback = await visitProvider(started.authorizeUrl, server.url)
    const { '__Host-svc-oauth-state': _state, ...others } = started.cookies
    expectLoginError(await finishLogin(server, callback, others), 'invalid_state')
    expectLoginError(await finishLogin(server, callback, {}), 'invalid_state')
  })

  it('a state planted in another browser is refused: it is bound to the browser that started the login', async () => {
    const attacker = await startLogin(server, '/auth/acme')
    const callback = await visitProvider(attacker.authorizeUrl, server.url)
    const { '__Host-svc-code': _binding, ...planted } = attacker.cookies
    expectLoginError(await finishLogin(server, callback, planted), 'invalid_state')
    const victim = await startLogin(server, '/auth/google')
    expectLoginError(await finishLogin(server, callback, { ...planted, '__Host-svc-code': victim.cookies['__Host-svc-code'] }), 'invalid_state')
  })

  it('a replayed state is refused, even with the original cookies', async () => {
    const started = await startLogin(server, '/auth/acme')
    const callback = await visitProvider(started.authorizeUrl, server.url)
    codeOf(await finishLogin(server, callback, started.cookies))
    expectLoginError(await finishLogin(server, callback, started.cookies), 'invalid_state')
  })

  it('a missing PKCE verifier ends the login; a wrong one is refused by the provider', async () => {
    const missing = await startLogin(server, '/auth/acme')
    const missingCallback = await visitProvider(missing.authorizeUrl, server.url)
    expectLoginError(await finishLogin(server, missingCallback, { ...missing.cookies, '__Host-svc-oauth-verifier': undefined }), 'invalid_state')

    const wrong = await startLogin(server, '/auth/acme')
    const wrongCallback = await visitProvider(wrong.authorizeUrl, server.url)
    const other = 'A'.repeat(43)
    expectLoginError(await finishLogin(server, wrongCallback, { ...wrong.cookies, '__Host-svc-oauth-verifier': other }), 'token_exchange_failed')
  })

  it('an id_token with another nonce is refused', async () => {
    const started = await startLogin(server, '/auth/google')
    const callback = await visitProvider(started.authorizeUrl, server.url)
    const res = await finishLogin(server, callback, { ...started.cookies, '__Host-svc-oauth-nonce': 'another-nonce-value' })
    expectLoginError(res, 'invalid_id_token')
  })

  it('an id_token issued to another client (audience) is refused', async () => {
    // The code is obtained for other-client; the token endpoint in front of the provider swaps the
    // credentials, so the provider answers a validly signed id_token whose audience is other-client.
    const started = await startLogin(server, '/auth/rogue')
    started.authorizeUrl.searchParams.set('client_id', 'other-client')
    const callback = await visitProvider(started.authorizeUrl, server.url)
    expect(callback.searchParams.get('code')).toBeTruthy()
    const res = await finishLogin(server, callback, started.cookies)
    expectLoginError(res, 'invalid_id_token')
    expect(server.output()).toMatch(/invalid_id_token[\s\S]*audience/)
  })

  it('a malformed callback query is refused without a 500', async () => {
    const res = await server.fetch('/auth/acme?code=a&code=b&state=s')
    expectLoginError(res, 'invalid_request')
    const long = await server.fetch(`/auth/acme?state=${'s'.repeat(600)}&code=x`)
    expectLoginError(long, 'invalid_request')
  })
})

/** One browser: its cookie jar, shared by its tabs. */
function browser() {
  const jar = new CookieJar()
  const get = async (path: string) => {
    const res = await server.fetch(path, { headers: { cookie: jar.header() } })
    jar.store(res)
    return res
  }
  return {
    jar,
    /** Starts a login at `path` (302 to the provider): the authorization URL, with `login_hint` when given. */
    async start(path: string, account?: string): Promise<URL> {
      const res = await get(path)
      expect(res.status, `start ${path}`).toBe(302)
      const url = new URL(res.headers.get('location')!)
      if (account) url.searchParams.set('login_hint', account)
      return url
    },
    /** Comes back from the provider: GET of the callback URL with this browser's cookies. */
    finish: (callback: URL) => get(`${callback.pathname}${callback.search}`),
  }
}

describe('attacks on the state and the code, against a real provider', () => {
  it('code injection: the attacker\'s code in the victim\'s callback, with the victim\'s own state, fails PKCE at the provider', async () => {
    const attacker = browser()
    const stolen = await visitProvider(await attacker.start('/auth/acme', 'bob'), server.url)
    const victim = browser()
    const own = await visitProvider(await victim.start('/auth/acme', 'alice'), server.url)
    const injected = new URL(own)
    injected.searchParams.set('code', stolen.searchParams.get('code')!)
    expectLoginError(await victim.finish(injected), 'token_exchange_failed')
    // The attacker's state in the victim's browser is refused before any exchange.
    const planted = new URL(stolen)
    expectLoginError(await victim.finish(planted), 'invalid_state')
  })

  it('mix-up: the state of a login with one provider is refused at the callback of another', async () => {
    const victim = browser()
    const acme = await visitProvider(await victim.start('/auth/acme'), server.url)
    // Sent to the callback of auth0 (another provider, another issuer) instead, with auth0's issuer.
    const atAuth0 = new URL(`/auth/auth0${acme.search}`, server.url)
    atAuth0.searchParams.set('iss', op2)
    expectLoginError(await victim.finish(atAuth0), 'invalid_state')

    // And the other way round: an auth0 login's state and code at acme's callback.
    const other = browser()
    const auth0 = await visitProvider(await other.start('/auth/auth0'), server.url)
    expect(auth0.pathname).toBe('/auth/auth0')
    expect(auth0.searchParams.get('iss')).toBe(op2)
    expectLoginError(await other.finish(new URL(`/auth/acme${auth0.search}`, server.url)), 'invalid_state')
  })

  it('iss: an answer naming another issuer is refused, and so is one without iss from a provider that announces it', async () => {
    const b = browser()
    const answer = await visitProvider(await b.start('/auth/acme'), server.url)
    // The provider names itself (RFC 9207), as its metadata announces.
    expect(answer.searchParams.get('iss')).toBe(op)
    const foreign = new URL(answer)
    foreign.searchParams.set('iss', op2)
    expectLoginError(await b.finish(foreign), 'invalid_request')

    const missing = await visitProvider(await b.start('/auth/acme'), server.url)
    missing.searchParams.delete('iss')
    expectLoginError(await b.finish(missing), 'invalid_request')

    // auth0's answer names auth0's issuer: its own logins go through.
    const other = browser()
    const res = await other.finish(await visitProvider(await other.start('/auth/auth0', 'alice'), server.url))
    const { me } = await exchange(server, codeOf(res))
    expect(me).toMatchObject({ sub: 'auth0:alice', provider: 'auth0' })
  })

  it('a login started in one tab finishes in another tab of the same browser', async () => {
    const b = browser()
    const authorize = await b.start('/auth/acme?redirect=/projects', 'alice')
    // The provider's answer opens in another tab: the same browser, the same cookies.
    const res = await b.finish(await visitProvider(authorize, server.url))
    const { body, me } = await exchange(server, codeOf(res))
    expect(body.redirect).toBe('/projects')
    expect(me).toMatchObject({ sub: 'acme:alice' })
  })

  it('two logins started in parallel in one browser: the later one completes, the earlier one fails cleanly, in either order', async () => {
    for (const earlierFirst of [true, false]) {
      const b = browser()
      const earlier = await b.start('/auth/acme', 'alice')
      const later = await b.start('/auth/google', 'bob')
      const [earlierBack, laterBack] = [await visitProvider(earlier, server.url), await visitProvider(later, server.url)]
      if (earlierFirst) expectLoginError(await b.finish(earlierBack), 'invalid_state')
      const { me } = await exchange(server, codeOf(await b.finish(laterBack)))
      expect(me, `earlier first: ${earlierFirst}`).toMatchObject({ sub: 'google:bob' })
      if (!earlierFirst) expectLoginError(await b.finish(earlierBack), 'invalid_state')
    }
  })
})

describe('github', () => {
  it('logs in with the primary verified email when the profile hides it', async () => {
    const started = await startLogin(server, '/auth/github')
    expect(started.authorizeUrl.searchParams.get('scope')).toBe('user:email read:user')
    expect(started.authorizeUrl.searchParams.has('nonce')).toBe(false)
    started.authorizeUrl.searchParams.set('login', 'octo')
    const callback = await visitProvider(started.authorizeUrl, server.url)
    const { me } = await exchange(server, codeOf(await finishLogin(server, callback, started.cookies)))
    expect(me).toMatchObject({ sub: 'github:583231', provider: 'github', email: 'octo@example.com', name: 'octocat', picture: 'https://avatars.example/583231' })
  })

  it('keeps a public email that GitHub lists as verified', async () => {
    const started = await startLogin(server, '/auth/github')
    started.authorizeUrl.searchParams.set('login', 'publicmail')
    const callback = await visitProvider(started.authorizeUrl, server.url)
    const { me } = await exchange(server, codeOf(await finishLogin(server, callback, started.cookies)))
    expect(me).toMatchObject({ sub: 'github:42', email: 'pat@example.com', name: 'Pat Public' })
  })
})
