import type { Server } from 'node:http'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { decodeJwt, exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose'
import type * as oauth from 'oauth4webapi'
import { TOTP } from 'otpauth'
import { CookieJar } from '../helpers/cookie-jar'
import { resolveOptions } from '../../src/build/resolve-options'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { serveModule } from './helpers/module-router'
import { buildStepContext } from './helpers/build-steps'
import { startOidcProvider, type FakeProvider } from './helpers/fake-provider'
import { peekAuthContext } from '../../src/runtime/server/utils/auth-context'
import { readSessionRecord } from '../../src/runtime/server/lib/core/records/refresh-token'
import { BACKCHANNEL_LOGOUT_EVENT, verifyLogoutToken } from '../../src/runtime/oauth/server/backchannel-logout'
import type { ResolvedProvider } from '../../src/runtime/oauth/server/preset'
import type { ModuleOptions } from '../../src/runtime/types/options'
import type { TwoFactorState } from '../../src/runtime/types/auth'

// The module's real endpoints on a plain h3 app: Nitro's runtime is these two functions.
const nitro = vi.hoisted(() => ({ options: undefined as unknown }))
vi.mock('nitropack/runtime', () => ({
  useRuntimeConfig: () => ({ svcAuth: nitro.options }),
  useNitroApp: () => ({ hooks: { callHook: async () => {} } }),
}))

// The OAuth build step, Nuxt's kit being mocked (it registers the feature of a logout at the provider).
const kit = vi.hoisted(() => ({ addServerHandler: vi.fn(), addServerImports: vi.fn(), addServerPlugin: vi.fn(), addTemplate: vi.fn(() => ({ dst: '/build/handlers.mjs' })) }))
vi.mock('@nuxt/kit', () => kit)

const CLIENT = 'acme-client'
const APP = 'https://app.example'
let server: Server
let base = ''
let options: ModuleOptions
let op: FakeProvider
let plain: FakeProvider
const twoFactorStates = new Map<string, TwoFactorState>()

beforeAll(async () => {
  op = await startOidcProvider('op', CLIENT, { endSession: true })
  // An OpenID provider without an end-session endpoint (Google's kind).
  plain = await startOidcProvider('plain', 'plain-client')
  options = resolveOptions({
    token: { secret: 'idp-logout-secret-0123456789-abcdefghijklmn' },
    tokenRefresh: { storage: { driver: 'memory' } },
    logging: { level: 'silent' },
    publicUrl: APP,
    redirect: { logout: '/bye' },
    twoFactor: { enabled: true },
    providers: {
      custom: {
        acme: { clientId: CLIENT, clientSecret: `${CLIENT}-secret`, issuer: op.issuer, postLogoutRedirectUrls: [`${APP}/signed-out`, `${APP}/other`] },
        plain: { clientId: 'plain-client', clientSecret: 'plain-client-secret', issuer: plain.issuer },
      },
    },
  }, false)
  nitro.options = options
  ;({ server, base } = await serveModule(options))
  defineAuthHandlers({
    twoFactor: {
      find: userId => twoFactorStates.get(userId) ?? null,
      save: (userId, state) => void (state ? twoFactorStates.set(userId, state) : twoFactorStates.delete(userId)),
    },
  })
})

afterAll(async () => {
  resetAuthHandlers()
  await new Promise(resolve => server?.close(resolve))
  await peekAuthContext()?.dispose()
  await op?.close()
  await plain?.close()
})

beforeEach(() => {
  op.reset()
  plain.reset()
})

/** One browser: its cookies, and requests to the app (never followed). */
function browser() {
  const jar = new CookieJar()
  const send = async (method: string, path: string, { body, bearer }: { body?: unknown, bearer?: string } = {}) => {
    const headers: Record<string, string> = { accept: 'application/json', cookie: jar.header() }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (bearer) headers.authorization = `Bearer ${bearer}`
    const res = await fetch(new URL(path, base), { method, headers, body: body === undefined ? undefined : JSON.stringify(body), redirect: 'manual' })
    jar.store(res)
    return res
  }
  return {
    jar,
    get: (path: string, bearer?: string) => send('GET', path, { bearer }),
    post: (path: string, body?: unknown, bearer?: string) => send('POST', path, { body, bearer }),
  }
}
type Browser = ReturnType<typeof browser>

async function json<T = Record<string, unknown>>(res: Response, status = 200): Promise<T> {
  const body = await res.json() as T
  expect(res.status, JSON.stringify(body)).toBe(status)
  return body
}

/** The path and query of a URL on the app (the provider redirects to `publicUrl`, served here at `base`). */
const pathOf = (url: string) => {
  const parsed = new URL(url)
  return `${parsed.pathname}${parsed.search}`
}

/** A login through `provider` (the provider's session `sid` when given) up to the access token. */
async function login(provider = 'acme', sid?: string): Promise<{ b: Browser, token: string }> {
  const fake = provider === 'acme' ? op : plain
  fake.change.claims = sid ? { sid } : {}
  const b = browser()
  const start = await b.get(`/auth/${provider}`)
  const back = await fetch(start.headers.get('location')!, { redirect: 'manual' })
  const callback = await b.get(pathOf(back.headers.get('location')!))
  const location = new URL(callback.headers.get('location')!, base)
  if (location.pathname !== '/auth/callback') return { b, token: '' }
  const { accessToken } = await json<{ accessToken: string }>(await b.post('/auth/token', { code: location.searchParams.get('code') }))
  return { b, token: accessToken }
}

const refreshCookie = (b: Browser) => b.jar.get('svc-refresh')!

/** Claims of a valid logout token for `sid`/`sub` (override or drop any with `extra`). */
function logoutClaims(extra: JWTPayload = {}): JWTPayload {
  const now = Math.floor(Date.now() / 1000)
  return { iss: op.issuer, aud: CLIENT, iat: now, exp: now + 120, jti: crypto.randomUUID(), events: { [BACKCHANNEL_LOGOUT_EVENT]: {} }, ...extra }
}

/** A server-to-server POST of the provider: a form, no Origin, no cookie. */
function backchannel(body: string, provider = 'acme', type = 'application/x-www-form-urlencoded') {
  return fetch(`${base}/auth/backchannel-logout/${provider}`, { method: 'POST', headers: { 'content-type': type }, body })
}
const form = (token: string) => new URLSearchParams({ logout_token: token }).toString()

/** Whether the session of `b` is alive: its access token at /api/user/me, and a refresh. */
async function alive(b: Browser, token: string): Promise<{ me: number, refresh: number }> {
  const me = (await b.get('/api/user/me', token)).status
  const refresh = (await b.post('/auth/refresh')).status
  return { me, refresh }
}

describe('the OAuth build step', () => {
  it('registers the back-channel logout route and the logout feature with a provider other than the mock only', async () => {
    const { setupOAuth } = await import('../../src/build/oauth')
    const withGoogle = buildStepContext({ providers: { google: { clientId: 'g', clientSecret: 's' } } })
    setupOAuth(withGoogle)
    expect(withGoogle.features).toEqual(['/module/runtime/oauth/server/oauth-feature'])
    expect(kit.addServerHandler.mock.calls.map(([h]) => (h as { route: string }).route)).toContain('/auth/backchannel-logout/:provider')
    kit.addServerHandler.mockClear()
    const mockOnly = buildStepContext({ providers: { mock: { mockUsers: [{ sub: 'm', email: 'm@example.com', name: 'M' }] } } })
    setupOAuth(mockOnly)
    expect(mockOnly.features).toEqual([])
    expect(kit.addServerHandler.mock.calls.map(([h]) => (h as { route: string }).route)).not.toContain('/auth/backchannel-logout/:provider')
  })
})

describe('the session keeps its OpenID provider login', () => {
  it('ID token, the provider\'s sid and sub are stored with the refresh token, and survive a rotation', async () => {
    const { b } = await login('acme', 'op-sid-keep')
    const ctx = peekAuthContext()!
    const record = await readSessionRecord(ctx, refreshCookie(b))
    expect(record?.upstream).toMatchObject({ provider: 'acme', sub: 'op-user-1', sid: 'op-sid-keep' })
    expect(decodeJwt(record!.upstream!.idToken)).toMatchObject({ aud: CLIENT, sid: 'op-sid-keep' })
    await json(await b.post('/auth/refresh'))
    expect((await readSessionRecord(ctx, refreshCookie(b)))?.upstream?.sid).toBe('op-sid-keep')
  })

  it('through the second factor\'s detour too', async () => {
    // The user turns two-factor on; their next login waits for a code, then the code makes the session.
    const first = await login('acme')
    const { secret } = await json<{ secret: string }>(await first.b.post('/auth/two-factor/enrol', {}, first.token))
    const { recoveryCodes } = await json<{ recoveryCodes: string[] }>(await first.b.post('/auth/two-factor/confirm', { code: new TOTP({ secret }).generate() }, first.token))
    try {
      op.change.claims = { sid: 'op-sid-2fa' }
      const b = browser()
      const start = await b.get('/auth/acme')
      const back = await fetch(start.headers.get('location')!, { redirect: 'manual' })
      const detour = new URL((await b.get(pathOf(back.headers.get('location')!))).headers.get('location')!, base)
      expect(detour.pathname).toBe(options.endpoints.secondFactorPath)
      const verified = await json<{ redirect: string }>(await b.post('/auth/two-factor/verify', { flow: detour.searchParams.get('flow'), recoveryCode: recoveryCodes[0] }))
      const { accessToken } = await json<{ accessToken: string }>(await b.post('/auth/token', { code: new URL(verified.redirect, base).searchParams.get('code') }))
      expect((await readSessionRecord(peekAuthContext()!, refreshCookie(b)))?.upstream?.sid).toBe('op-sid-2fa')
      await json(await backchannel(form(await op.sign(logoutClaims({ sid: 'op-sid-2fa' })))))
      expect(await alive(b, accessToken)).toEqual({ me: 401, refresh: 401 })
    }
    finally {
      twoFactorStates.delete('acme:op-user-1')
    }
  })
})

describe('RP-Initiated Logout: POST /auth/logout with { provider: true }', () => {
  it('answers the end-session URL with id_token_hint, client_id and the first allow-listed post_logout_redirect_uri', async () => {
    const { b, token } = await login('acme', 'op-sid-rp')
    const idToken = (await readSessionRecord(peekAuthContext()!, refreshCookie(b)))!.upstream!.idToken
    const answer = await json<{ success: true, redirect: string }>(await b.post('/auth/logout', { provider: true }))
    const url = new URL(answer.redirect)
    expect(`${url.origin}${url.pathname}`).toBe(`${op.base}/op/logout`)
    expect(Object.fromEntries(url.searchParams)).toEqual({ id_token_hint: idToken, client_id: CLIENT, post_logout_redirect_uri: `${APP}/signed-out` })
    // The local logout happened as always.
    expect(await alive(b, token)).toEqual({ me: 401, refresh: 401 })
  })

  it('takes another allow-listed URI exactly; any other is refused before the session ends', async () => {
    const { b, token } = await login('acme')
    for (const asked of [`${APP}/evil`, `${APP}/other/`, 'https://evil.example/other', '/other']) {
      const refused = await json<{ error: string }>(await b.post('/auth/logout', { provider: true, postLogoutRedirectUri: asked }), 400)
      expect(refused.error).toBe('bad_request')
    }
    expect((await b.get('/api/user/me', token)).status).toBe(200)
    const answer = await json<{ redirect: string }>(await b.post('/auth/logout', { provider: true, postLogoutRedirectUri: `${APP}/other` }))
    expect(new URL(answer.redirect).searchParams.get('post_logout_redirect_uri')).toBe(`${APP}/other`)
  })

  it('without the flag, or without a session, or from a provider without an end-session endpoint: { success: true } only', async () => {
    const { b } = await login('acme')
    expect(await json(await b.post('/auth/logout'))).toEqual({ success: true })
    expect(await json(await browser().post('/auth/logout', { provider: true }))).toEqual({ success: true })
    const other = await login('plain')
    expect(await json(await other.b.post('/auth/logout', { provider: true }))).toEqual({ success: true })
  })
})

describe('Back-Channel Logout: POST /auth/backchannel-logout/<provider>', () => {
  it('the provider\'s logout token for a sid ends that session only: refresh and access token refused, 200 no-store', async () => {
    const one = await login('acme', 'op-sid-a')
    const two = await login('acme', 'op-sid-b')
    const res = await backchannel(form(await op.sign(logoutClaims({ sid: 'op-sid-a' }))))
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(await alive(one.b, one.token)).toEqual({ me: 401, refresh: 401 })
    expect((await two.b.get('/api/user/me', two.token)).status).toBe(200)
  })

  it('a token with sub only ends every session of that user from that provider, not from another', async () => {
    const one = await login('acme', 'op-sid-c')
    const two = await login('acme')
    const elsewhere = await login('plain')
    await json(await backchannel(form(await op.sign(logoutClaims({ sub: 'op-user-1' })))))
    expect((await one.b.get('/api/user/me', one.token)).status).toBe(401)
    expect((await two.b.get('/api/user/me', two.token)).status).toBe(401)
    expect((await elsewhere.b.get('/api/user/me', elsewhere.token)).status).toBe(200)
  })

  it('a sid with another sub ends nothing; an unknown sid is harmless (200)', async () => {
    const { b, token } = await login('acme', 'op-sid-d')
    await json(await backchannel(form(await op.sign(logoutClaims({ sid: 'op-sid-d', sub: 'someone-else' })))))
    await json(await backchannel(form(await op.sign(logoutClaims({ sid: 'never-seen' })))))
    expect((await b.get('/api/user/me', token)).status).toBe(200)
  })

  it('refuses a replayed token (same jti), even once its session has ended', async () => {
    await login('acme', 'op-sid-e')
    const token = await op.sign(logoutClaims({ sid: 'op-sid-e' }))
    await json(await backchannel(form(token)))
    expect(await json(await backchannel(form(token)), 400)).toMatchObject({ error: 'invalid_request', message: 'This logout token was used already' })
  })

  it('refuses forged, foreign and malformed tokens with 400 invalid_request, and ends nothing', async () => {
    const { b, token } = await login('acme', 'op-sid-f')
    const now = Math.floor(Date.now() / 1000)
    const { privateKey: otherKey } = await generateKeyPair('RS256')
    const forged = await new SignJWT(logoutClaims({ sid: 'op-sid-f' })).setProtectedHeader({ alg: 'RS256', kid: 'fake-1' }).sign(otherKey)
    const hs = await new SignJWT(logoutClaims({ sid: 'op-sid-f' })).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(`${CLIENT}-secret`))
    const none = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${Buffer.from(JSON.stringify(logoutClaims({ sid: 'op-sid-f' }))).toString('base64url')}.`
    const { events: _events, ...noEvents } = logoutClaims({ sid: 'op-sid-f' })
    const { jti: _jti, ...noJti } = logoutClaims({ sid: 'op-sid-f' })
    const { iat: _iat, ...noIat } = logoutClaims({ sid: 'op-sid-f' })
    const cases: Record<string, string> = {
      'signed with another key': forged,
      'signed with the client secret (HS256)': hs,
      'unsigned (alg none)': none,
      'for another audience': await op.sign(logoutClaims({ sid: 'op-sid-f', aud: 'other-client' })),
      'from another issuer': await op.sign(logoutClaims({ sid: 'op-sid-f', iss: plain.issuer })),
      'with a nonce': await op.sign(logoutClaims({ sid: 'op-sid-f', nonce: 'n-1' })),
      'without events': await op.sign(noEvents),
      'with another event': await op.sign(logoutClaims({ sid: 'op-sid-f', events: { 'http://schemas.openid.net/event/other': {} } })),
      'with the event as a string': await op.sign(logoutClaims({ sid: 'op-sid-f', events: { [BACKCHANNEL_LOGOUT_EVENT]: 'yes' } })),
      'without sid or sub': await op.sign(logoutClaims()),
      'with a sid and a sub that is not a string': await op.sign(logoutClaims({ sid: 'op-sid-f', sub: 7 as unknown as string })),
      'with a sid and an empty sub': await op.sign(logoutClaims({ sid: 'op-sid-f', sub: '' })),
      'issued to another client (azp), us among its audiences': await op.sign(logoutClaims({ sid: 'op-sid-f', aud: ['other-client', CLIENT], azp: 'other-client' })),
      'without jti': await op.sign(noJti),
      'without iat': await op.sign(noIat),
      'issued too long ago': await op.sign(logoutClaims({ sid: 'op-sid-f', iat: now - 3600, exp: now + 60 })),
      'issued in the future': await op.sign(logoutClaims({ sid: 'op-sid-f', iat: now + 3600, exp: now + 7200 })),
      'expired': await op.sign(logoutClaims({ sid: 'op-sid-f', iat: now - 200, exp: now - 100 })),
      'not a JWT': 'not-a-jwt',
    }
    for (const [label, logoutToken] of Object.entries(cases)) {
      const body = await json<{ error: string }>(await backchannel(form(logoutToken)), 400).catch((error: unknown) => {
        throw new Error(`${label}: ${String(error)}`)
      })
      expect(body.error, label).toBe('invalid_request')
    }
    // A token of this provider sent to another provider's endpoint names the wrong issuer and audience.
    expect((await backchannel(form(await op.sign(logoutClaims({ sid: 'op-sid-f' }))), 'plain')).status).toBe(400)
    expect((await b.get('/api/user/me', token)).status).toBe(200)
  })

  it('refuses a body that is not a form, a missing or repeated logout_token, an unknown provider and a body over 16 KB', async () => {
    const valid = await op.sign(logoutClaims({ sid: 'x' }))
    expect((await backchannel(JSON.stringify({ logout_token: valid }), 'acme', 'application/json')).status).toBe(400)
    expect((await backchannel('')).status).toBe(400)
    expect((await backchannel(`${form(valid)}&${form(valid)}`)).status).toBe(400)
    expect((await backchannel(form(valid), 'nobody')).status).toBe(404)
    const big = await backchannel(form('a'.repeat(17 * 1024)))
    expect(big.status).toBe(413)
  })

  it('is not refused for a missing or foreign Origin (a server-to-server call)', async () => {
    const { b, token } = await login('acme', 'op-sid-g')
    const res = await fetch(`${base}/auth/backchannel-logout/acme`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'origin': 'https://op.example' }, body: form(await op.sign(logoutClaims({ sid: 'op-sid-g' }))) })
    expect(res.status).toBe(200)
    expect((await b.get('/api/user/me', token)).status).toBe(401)
  })

  it('of 20 concurrent deliveries of one token exactly one is accepted', async () => {
    await login('acme', 'op-sid-h')
    const token = await op.sign(logoutClaims({ sid: 'op-sid-h' }))
    const statuses = await Promise.all(Array.from({ length: 20 }, () => backchannel(form(token)).then(res => res.status)))
    expect(statuses.filter(status => status === 200)).toHaveLength(1)
    expect(statuses.filter(status => status === 400)).toHaveLength(19)
  })
})

describe('a logout token\'s explicit type (RFC 8725 3.11)', () => {
  it('passes without typ, or typed logout+jwt or JWT; another type (an access token, a security event token) is refused', async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256')
    const keys = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] }
    const as = { issuer: 'https://op.example', jwks_uri: 'https://op.example/jwks', id_token_signing_alg_values_supported: ['RS256'] } as oauth.AuthorizationServer
    const provider = { name: 'typed', clientId: CLIENT, multiTenantIssuer: false } as ResolvedProvider
    const fetchKeys = async () => new Response(JSON.stringify(keys), { headers: { 'content-type': 'application/json' } })
    const verify = async (typ?: string) => {
      const claims = { ...logoutClaims({ sid: 's-1' }), iss: as.issuer }
      const token = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1', ...(typ ? { typ } : {}) }).sign(privateKey)
      return verifyLogoutToken(token, provider, as, fetchKeys).then(() => 'accepted', (error: { reason?: string }) => error.reason)
    }
    for (const typ of [undefined, 'logout+jwt', 'application/logout+jwt', 'JWT']) expect(await verify(typ), String(typ)).toBe('accepted')
    for (const typ of ['at+jwt', 'secevent+jwt', 'id_token+jwt', 'JOSE']) expect(await verify(typ), typ).toBe('typ')
  })
})
