import { randomBytes } from 'node:crypto'
import { request } from 'node:http'
import { describe, expect, it, vi } from 'vitest'
import { CookieJar, jarBrowser } from '../helpers/cookie-jar'
import { resolveOptions } from '../../src/build/resolve-options'
import { nativeRoutes } from '../../src/build/module-routes'
import { s256 } from '../../src/runtime/server/lib/store/crypto'
import type { ModuleOptions } from '../../src/runtime/types/options'
import { serveModuleForFile } from './helpers/module-router'

// The native endpoints through the module's real routes on a plain h3 app on a loopback port (Nitro's
// runtime is nitro-stub.ts), with the mock provider as the identity provider.
vi.mock('nitropack/runtime', () => import('./helpers/nitro-stub'))

const APP_URI = 'com.example.app:/callback'
const LOOPBACK_URI = 'http://127.0.0.1/native/cb'
const MAX_BODY = 16 * 1024

const options: ModuleOptions = resolveOptions({
  token: { secret: 'native-clients-secret-0123456789-abcdefghij' },
  tokenRefresh: { storage: { driver: 'memory' }, reuseGracePeriod: 10 },
  logging: { level: 'silent' },
  security: { maxBodySize: MAX_BODY },
  providers: { mock: { enableInProduction: true, mockUsers: [{ sub: 'mock-1', email: 'mock@example.com', name: 'Mock One' }] } },
  native: { redirectUris: [APP_URI, LOOPBACK_URI] },
}, false)
const served = serveModuleForFile(() => options)

const path = (rest: string) => `/auth/native/${rest}`

/** A request as a native app sends it: JSON, no cookies, no browser headers unless given. */
async function app(rest: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${served.base}${path(rest)}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) })
}

/** {@link app} over node:http, whose headers are sent as given (Node's fetch sets `Sec-Fetch-Mode` itself). */
function rawApp(rest: string, body: unknown, headers: Record<string, string>): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request(`${served.base}${path(rest)}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve(new Response(Buffer.concat(chunks), { status: res.statusCode })))
    })
    req.on('error', reject)
    req.end(JSON.stringify(body))
  })
}

async function json<T>(res: Response, status = 200): Promise<T> {
  const body = await res.json() as T
  expect(res.status, JSON.stringify(body)).toBe(status)
  return body
}
const errorOf = async (res: Response, status: number) => (await json<{ error: string }>(res, status)).error

/** The system browser: its cookie jar, following nothing by itself. */
const systemBrowser = () => jarBrowser(() => served.base)

/** PKCE of one login. */
function pkce() {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: s256(verifier) }
}

interface TokenAnswer { accessToken: string, token: string, expiresIn: number, tokenType: string, refreshToken: string, refreshExpiresIn: number }

/** Runs a native login in a system browser up to the redirect to the app: the URL the app receives. */
async function nativeLogin(query: Record<string, string>, browser = systemBrowser()): Promise<URL> {
  let res = await browser.get(`${path('login/mock')}?${new URLSearchParams(query)}`)
  for (let hop = 0; hop < 4 && res.status === 302; hop++) {
    const location = res.headers.get('location')!
    if (!location.startsWith('/')) return new URL(location)
    res = await browser.get(location)
  }
  throw new Error(`no redirect to the app (status ${res.status})`)
}

/** A native login's code and its verifier. */
async function nativeCode(redirectUri = APP_URI): Promise<{ code: string, verifier: string }> {
  const { verifier, challenge } = pkce()
  const back = await nativeLogin({ redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256', state: 'app-state' })
  expect(back.searchParams.get('state')).toBe('app-state')
  return { code: back.searchParams.get('code')!, verifier }
}

/** A native session's first answer. */
async function nativeSession(): Promise<TokenAnswer> {
  const { code, verifier } = await nativeCode()
  return json<TokenAnswer>(await app('token', { code, codeVerifier: verifier }))
}

/** A browser session: its cookie jar after the cookie flow's login. */
async function browserSession(): Promise<CookieJar> {
  const b = systemBrowser()
  let res = await b.get('/auth/mock')
  while (res.status === 302 && !res.headers.get('location')!.startsWith(options.endpoints.callbackPath)) res = await b.get(res.headers.get('location')!)
  const code = new URL(res.headers.get('location')!, served.base).searchParams.get('code')!
  const exchange = await fetch(`${served.base}${options.endpoints.tokenPath}`, { method: 'POST', headers: { 'content-type': 'application/json', 'cookie': b.jar.header() }, body: JSON.stringify({ code }) })
  expect(exchange.status).toBe(200)
  b.jar.store(exchange)
  return b.jar
}

const cookieRefresh = (jar: CookieJar) => fetch(`${served.base}${options.endpoints.refreshPath}`, { method: 'POST', headers: { cookie: jar.header() } })

describe('native login (RFC 8252) with the mock provider', () => {
  it('returns a code and the app\'s state to the app\'s URI; the code, with its verifier, gives an access and a refresh token', async () => {
    const { code, verifier } = await nativeCode()
    expect(code).toMatch(/^[\w-]{43}$/)
    const answer = await json<TokenAnswer>(await app('token', { code, codeVerifier: verifier }))
    expect(answer).toMatchObject({ tokenType: 'Bearer', expiresIn: 3600, refreshExpiresIn: 604800 })
    expect(answer.accessToken).toBe(answer.token)
    expect(answer.refreshToken).toMatch(/^[\w-]{43}$/)
    const me = await fetch(`${served.base}${options.endpoints.userInfoPath}`, { headers: { authorization: `Bearer ${answer.accessToken}` } })
    expect((await json<{ sub: string }>(me)).sub).toBe('mock:mock-1')
  })

  it('a loopback redirect URI matches on any port, only as listed', async () => {
    const { code, verifier } = await nativeCode('http://127.0.0.1:49152/native/cb')
    await json(await app('token', { code, codeVerifier: verifier }))
    const { challenge } = pkce()
    for (const uri of ['http://localhost:49152/native/cb', 'http://127.0.0.1:49152/native/other', 'http://127.0.0.2:49152/native/cb', 'https://127.0.0.1:49152/native/cb']) {
      const res = await systemBrowser().get(`${path('login/mock')}?${new URLSearchParams({ redirect_uri: uri, code_challenge: challenge, code_challenge_method: 'S256' })}`)
      expect(res.status, uri).toBe(400)
    }
  })

  it('an unlisted redirect URI answers a JSON 400 and is never redirected to', async () => {
    const { challenge } = pkce()
    for (const uri of ['com.example.app:/callback/other', 'com.evil.app:/callback', 'https://evil.example/cb', `${APP_URI}#x`, '']) {
      const res = await systemBrowser().get(`${path('login/mock')}?${new URLSearchParams({ redirect_uri: uri, code_challenge: challenge, code_challenge_method: 'S256', state: 's' })}`)
      expect(res.headers.get('location'), uri).toBeNull()
      expect(await errorOf(res, 400)).toBe('invalid_request')
    }
    // Two redirect_uri parameters are none.
    const twice = await systemBrowser().get(`${path('login/mock')}?redirect_uri=${encodeURIComponent(APP_URI)}&redirect_uri=${encodeURIComponent(APP_URI)}&code_challenge=${challenge}&code_challenge_method=S256`)
    expect(await errorOf(twice, 400)).toBe('invalid_request')
  })

  it('without PKCE S256, or for an unknown provider, the error returns to the app with its state', async () => {
    const { challenge } = pkce()
    const queries: Array<Record<string, string>> = [{ code_challenge: challenge, code_challenge_method: 'plain' }, { code_challenge_method: 'S256' }, { code_challenge: 'short', code_challenge_method: 'S256' }]
    for (const query of queries) {
      const back = await nativeLogin({ redirect_uri: APP_URI, state: 'st', ...query })
      expect(`${back.protocol}${back.pathname}`).toBe(APP_URI)
      expect(back.searchParams.get('error')).toBe('invalid_request')
      expect(back.searchParams.get('state')).toBe('st')
      expect(back.searchParams.get('code')).toBeNull()
    }
    const res = await systemBrowser().get(`${path('login/nope')}?${new URLSearchParams({ redirect_uri: APP_URI, code_challenge: challenge, code_challenge_method: 'S256', state: 'st' })}`)
    expect(res.status).toBe(302)
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('invalid_request')
  })

  it('a provider\'s error returns to the app with its state, never to the web error page', async () => {
    const { challenge } = pkce()
    const back = await nativeLogin({ redirect_uri: APP_URI, code_challenge: challenge, code_challenge_method: 'S256', state: 'st', mock_error: 'access_denied' })
    expect(`${back.protocol}${back.pathname}`).toBe(APP_URI)
    expect(back.searchParams.get('error')).toBe('access_denied')
    expect(back.searchParams.get('state')).toBe('st')
  })

  it('a verifier that does not match refuses the code and burns it; a replayed code is refused', async () => {
    const { code, verifier } = await nativeCode()
    expect(await errorOf(await app('token', { code, codeVerifier: pkce().verifier }), 401)).toBe('code_binding_mismatch')
    expect(await errorOf(await app('token', { code, codeVerifier: verifier }), 401)).toBe('invalid_code')
    const second = await nativeCode()
    await json(await app('token', { code: second.code, codeVerifier: second.verifier }))
    expect(await errorOf(await app('token', { code: second.code, codeVerifier: second.verifier }), 401)).toBe('invalid_code')
  })

  it('50 concurrent exchanges of one code: exactly one session', async () => {
    const { code, verifier } = await nativeCode()
    const answers = await Promise.all(Array.from({ length: 50 }, () => app('token', { code, codeVerifier: verifier })))
    expect(answers.map(res => res.status).sort()).toEqual([200, ...Array.from({ length: 49 }, () => 401)])
  })
})

describe('native refresh and logout (the refresh token in the body)', () => {
  it('rotates like the cookie: a successor, the same one within the grace period, and a working access token', async () => {
    const first = await nativeSession()
    const next = await json<TokenAnswer>(await app('refresh', { refreshToken: first.refreshToken }))
    expect(next.refreshToken).not.toBe(first.refreshToken)
    expect(next.tokenType).toBe('Bearer')
    expect(next.refreshExpiresIn).toBeGreaterThan(604790)
    const again = await json<TokenAnswer>(await app('refresh', { refreshToken: first.refreshToken }))
    expect(again.refreshToken).toBe(next.refreshToken)
    const third = await json<TokenAnswer>(await app('refresh', { refreshToken: next.refreshToken }))
    expect(third.refreshToken).not.toBe(next.refreshToken)
  })

  it('50 concurrent uses of one refresh token all get the one same successor', async () => {
    const first = await nativeSession()
    const answers = await Promise.all(Array.from({ length: 50 }, () => app('refresh', { refreshToken: first.refreshToken }).then(res => json<TokenAnswer>(res))))
    expect(new Set(answers.map(a => a.refreshToken)).size).toBe(1)
  })

  it('logout with any token of the session ends it, one rotated since too; an unknown token succeeds', async () => {
    const first = await nativeSession()
    const next = await json<TokenAnswer>(await app('refresh', { refreshToken: first.refreshToken }))
    expect(await json(await app('logout', { refreshToken: first.refreshToken }))).toEqual({ success: true })
    expect(await errorOf(await app('refresh', { refreshToken: next.refreshToken }), 401)).toBe('invalid_refresh_token')
    const me = await fetch(`${served.base}${options.endpoints.userInfoPath}`, { headers: { authorization: `Bearer ${next.accessToken}` } })
    expect(await errorOf(me, 401)).toBe('session_revoked')
    expect(await json(await app('logout', { refreshToken: 'x'.repeat(43) }))).toEqual({ success: true })
  })

  it('refuses malformed and oversized bodies with a JSON error, never a 500', async () => {
    expect(await errorOf(await app('refresh', {}), 400)).toBe('bad_request')
    expect(await errorOf(await app('refresh', { refreshToken: 7 }), 400)).toBe('bad_request')
    expect(await errorOf(await app('refresh', '{"refreshToken":'), 400)).toBe('bad_request')
    expect(await errorOf(await app('token', { code: 'c', codeVerifier: 'short' }), 400)).toBe('bad_request')
    expect(await errorOf(await app('logout', { refreshToken: 'x'.repeat(MAX_BODY) }), 413)).toBe('payload_too_large')
  })
})

describe('browser requests to the native endpoints', () => {
  const signals: Array<[string, Record<string, string>]> = [
    ['Origin', { origin: 'https://evil.example' }],
    ['a same-origin Origin', { origin: 'http://127.0.0.1' }],
    ['Sec-Fetch-Site', { 'sec-fetch-site': 'same-origin' }],
    ['Sec-Fetch-Mode other than Node\'s', { 'sec-fetch-mode': 'navigate' }],
    ['Sec-Fetch-Dest', { 'sec-fetch-dest': 'empty' }],
    ['a browser\'s fetch headers', { 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'same-origin', 'sec-fetch-dest': 'empty' }],
    ['the refresh cookie', { cookie: 'other=1; svc-refresh=abc' }],
  ]

  it.each(signals)('are refused with %s (403 browser_request), before the body is looked at', async (_, headers) => {
    const session = await nativeSession()
    for (const [rest, body] of [['token', { code: 'c', codeVerifier: 'v'.repeat(43) }], ['refresh', { refreshToken: session.refreshToken }], ['logout', { refreshToken: session.refreshToken }]] as const) {
      expect(await errorOf(await rawApp(rest, body, headers), 403), rest).toBe('browser_request')
    }
    // Nothing was used up: the session refreshes from its token.
    await json(await app('refresh', { refreshToken: session.refreshToken }))
  })

  it('Node\'s fetch passes (it sends Sec-Fetch-Mode: cors alone)', async () => {
    const session = await nativeSession()
    await json(await app('refresh', { refreshToken: session.refreshToken }, { 'sec-fetch-mode': 'cors' }))
  })
})

describe('channel separation', () => {
  it('a browser session\'s refresh token is refused in the body and left as it is; the native logout ends nothing with it', async () => {
    const jar = await browserSession()
    const cookie = jar.get(options.tokenRefresh.cookie.cookieName)!
    expect(await errorOf(await app('refresh', { refreshToken: cookie }), 401)).toBe('invalid_refresh_token')
    expect(await json(await app('logout', { refreshToken: cookie }))).toEqual({ success: true })
    // Neither rotated nor revoked: the browser refreshes (and, later than the grace period, would not be a reuse).
    expect((await cookieRefresh(jar)).status).toBe(200)
  })

  it('a native refresh token is refused in the cookie, and stays the app\'s', async () => {
    const session = await nativeSession()
    const jar = new CookieJar([[options.tokenRefresh.cookie.cookieName, session.refreshToken]])
    expect(await errorOf(await cookieRefresh(jar), 401)).toBe('invalid_refresh_token')
    const logout = await fetch(`${served.base}${options.endpoints.logoutPath}`, { method: 'POST', headers: { cookie: jar.header() } })
    expect(logout.status).toBe(200)
    await json(await app('refresh', { refreshToken: session.refreshToken }))
  })

  it('a native login\'s code is refused at the cookie exchange, and a browser\'s code at the native one', async () => {
    const { code } = await nativeCode()
    const atCookie = await fetch(`${served.base}${options.endpoints.tokenPath}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) })
    expect(await errorOf(atCookie, 401)).toBe('code_binding_mismatch')

    const b = systemBrowser()
    let res = await b.get('/auth/mock')
    while (res.status === 302 && !res.headers.get('location')!.startsWith(options.endpoints.callbackPath)) res = await b.get(res.headers.get('location')!)
    const browserCode = new URL(res.headers.get('location')!, served.base).searchParams.get('code')!
    expect(await errorOf(await app('token', { code: browserCode, codeVerifier: pkce().verifier }), 401)).toBe('code_binding_mismatch')
  })
})

describe('the native routes in the build', () => {
  it('exist only when native is set, the login only with an OAuth provider', () => {
    const off = resolveOptions({ providers: { mock: { mockUsers: [] } } }, true)
    expect(nativeRoutes(off)).toEqual([])
    const noOAuth = resolveOptions({ native: { redirectUris: [APP_URI] } }, true)
    expect(nativeRoutes(noOAuth).map(r => `${r.method} ${r.route}`)).toEqual(['post /auth/native/token', 'post /auth/native/refresh', 'post /auth/native/logout'])
    const on = resolveOptions({ native: { redirectUris: [APP_URI] }, endpoints: { authPath: '/api/auth' }, providers: { mock: { mockUsers: [] } } }, true)
    expect(nativeRoutes(on).map(r => `${r.method} ${r.route}`)).toContain('get /api/auth/native/login/:provider')
  })
})
