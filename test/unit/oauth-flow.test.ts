import { createHash, randomBytes } from 'node:crypto'
import { sendRedirect } from 'h3'
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { resolveOptions } from '../../src/build/resolve-options'
import { createAuthContext, type AuthContext } from '../../src/runtime/server/lib/core/context'
import { resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { clearProviderCaches } from '../../src/runtime/oauth/server/provider-http'
import type { ProviderFetch } from '../../src/runtime/oauth/server/preset'
import { consumeAuthCode } from '../../src/runtime/server/lib/core/records/auth-code'
import type { OAuthErrorPayload, OAuthEventHandlerOptions } from '../../src/runtime/oauth/oauth-types'
import type { ProvidersOptions } from '../../src/runtime/types/providers'
import { startOAuthApp, type OAuthApp } from './helpers/oauth-app'
import { features } from './helpers/features'

type Signer = (claims: JWTPayload) => Promise<string>

interface FakeIdpOptions {
  issuer: string
  tokenUrl: string
  jwksUri: string
  userinfoUrl: string
  clientId: string
  clientSecret: string
}

/**
 * An identity provider living inside a fetch function (nothing leaves the process): it issues
 * codes from `authorize`, checks client, code and PKCE at its token endpoint and answers an
 * id_token whose claims and signature each test may change.
 */
async function fakeIdp(o: FakeIdpOptions) {
  const { privateKey, publicKey } = await generateKeyPair('RS256')
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }
  const codes = new Map<string, { nonce?: string, challenge: string, redirectUri: string }>()
  const state = {
    sub: 'user-1',
    claims: {} as JWTPayload,
    userinfo: {} as Record<string, unknown>,
    sign: (async claims => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(privateKey)) as Signer,
    tokenRequests: 0,
  }
  const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })
  const fetch: ProviderFetch = async (url, init) => {
    const target = new URL(url)
    const bare = `${target.origin}${target.pathname}`
    if (bare === o.tokenUrl && init.method === 'POST') {
      state.tokenRequests++
      const form = new URLSearchParams(init.body as string | URLSearchParams)
      const headers = init.headers as Record<string, string>
      const basic = headers.authorization?.replace(/^Basic /, '')
      const [id, secret] = basic ? Buffer.from(basic, 'base64').toString().split(':').map(decodeURIComponent) : [form.get('client_id'), form.get('client_secret')]
      if (id !== o.clientId || secret !== o.clientSecret) return json({ error: 'invalid_client' }, 401)
      const entry = codes.get(form.get('code') ?? '')
      codes.delete(form.get('code') ?? '')
      if (!entry || createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url') !== entry.challenge) return json({ error: 'invalid_grant' }, 400)
      const now = Math.floor(Date.now() / 1000)
      const idToken = await state.sign({ iss: o.issuer, aud: o.clientId, sub: state.sub, iat: now, exp: now + 300, nonce: entry.nonce, email: 'u1@example.com', email_verified: true, ...state.claims })
      return json({ access_token: randomBytes(8).toString('hex'), token_type: 'Bearer', expires_in: 300, id_token: idToken })
    }
    if (bare === o.jwksUri) return json({ keys: [jwk] })
    if (bare === o.userinfoUrl) return json({ sub: state.sub, name: 'User One', ...state.userinfo })
    return json({ error: 'not_found' }, 404)
  }
  /** The user agrees at the provider: a callback URL with code and state. */
  const authorize = (authorizeUrl: URL): URL => {
    const p = authorizeUrl.searchParams
    const code = randomBytes(8).toString('hex')
    codes.set(code, { nonce: p.get('nonce') ?? undefined, challenge: p.get('code_challenge') ?? '', redirectUri: p.get('redirect_uri') ?? '' })
    const back = new URL(p.get('redirect_uri')!)
    back.searchParams.set('code', code)
    back.searchParams.set('state', p.get('state') ?? '')
    return back
  }
  return { fetch, authorize, state, privateKey }
}

const MS = 'https://login.microsoftonline.com'
const TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad'

let ctx: AuthContext
let server: OAuthApp
let base: string
let fetchFn: ProviderFetch = async () => new Response(null, { status: 500 })
let handlers: OAuthEventHandlerOptions<object> = {}

const providers: ProvidersOptions = {
  google: { clientId: 'g-client', clientSecret: 'g-secret', authorizationParams: { prompt: 'consent', state: 'evil', redirect_uri: 'https://evil.example/cb', nonce: 'fixed' } },
  microsoft: { clientId: 'ms-client', clientSecret: 'ms-secret' },
  auth0: { clientId: 'a0-client', clientSecret: 'a0-secret-with-enough-length-0123456789', domain: 'tenant.auth0.example' },
  custom: [{ name: 'down', clientId: 'd', clientSecret: 'd', issuer: 'https://down.example' }],
}

beforeAll(async () => {
  const options = resolveOptions({
    token: { secret: 'oauth-flow-unit-secret-0123456789-abcdefghij' },
    tokenRefresh: { storage: { driver: 'memory' } },
    logging: { level: 'silent' },
    redirect: { error: '/oops' },
    providers,
  }, false)
  ctx = await createAuthContext(options, { dev: true, features })
  server = await startOAuthApp(ctx, () => ({ fetch: (url, init) => fetchFn(url, init), handlers }))
  base = server.base
})

afterAll(async () => {
  await server.close()
  await ctx.dispose()
})

beforeEach(() => {
  resetAuthHandlers()
  clearProviderCaches()
  handlers = {}
})

const cookiesOf = (res: Response) => res.headers.getSetCookie().map(l => l.split(';')[0]).filter(c => !c!.endsWith('=')).join('; ')

/** Start at the app, agree at the fake provider, come back: the app's final answer. */
async function login(name: string, idp: Awaited<ReturnType<typeof fakeIdp>>) {
  const start = await fetch(`${base}/auth/${name}`, { redirect: 'manual' })
  expect(start.status).toBe(302)
  const authorizeUrl = new URL(start.headers.get('location')!)
  const callback = idp.authorize(authorizeUrl)
  const res = await fetch(`${base}${callback.pathname}${callback.search}`, { redirect: 'manual', headers: { cookie: cookiesOf(start) } })
  return { authorizeUrl, res }
}

function errorOf(res: Response): string | null {
  expect(res.status).toBe(302)
  const location = new URL(res.headers.get('location')!, base)
  expect(location.pathname).toBe('/oops')
  return location.searchParams.get('error')
}

async function userOf(res: Response) {
  expect(res.status).toBe(302)
  const location = new URL(res.headers.get('location')!, base)
  expect(location.pathname).toBe('/auth/callback')
  const record = await consumeAuthCode(ctx, location.searchParams.get('code')!)
  return record!.user
}

describe('Entra ID multi-tenant', () => {
  const ms = () => fakeIdp({ issuer: `${MS}/${TENANT}/v2.0`, tokenUrl: `${MS}/common/oauth2/v2.0/token`, jwksUri: `${MS}/common/discovery/v2.0/keys`, userinfoUrl: 'https://graph.microsoft.com/oidc/userinfo', clientId: 'ms-client', clientSecret: 'ms-secret' })

  it('accepts the issuer of the token\'s own tenant, with a valid signature', async () => {
    const idp = await ms()
    idp.state.claims = { tid: TENANT }
    fetchFn = idp.fetch
    const { authorizeUrl, res } = await login('microsoft', idp)
    expect(authorizeUrl.origin + authorizeUrl.pathname).toBe(`${MS}/common/oauth2/v2.0/authorize`)
    expect(await userOf(res)).toMatchObject({ sub: 'microsoft:user-1', email: 'u1@example.com', tid: TENANT })
  })

  it('refuses an issuer that names another tenant than tid', async () => {
    const idp = await ms()
    idp.state.claims = { tid: TENANT, iss: `${MS}/00000000-0000-0000-0000-000000000001/v2.0` }
    fetchFn = idp.fetch
    expect(errorOf((await login('microsoft', idp)).res)).toBe('invalid_id_token')
  })
})

describe('id_token validation', () => {
  const google = () => fakeIdp({ issuer: 'https://accounts.google.com', tokenUrl: 'https://oauth2.googleapis.com/token', jwksUri: 'https://www.googleapis.com/oauth2/v3/certs', userinfoUrl: 'https://openidconnect.googleapis.com/v1/userinfo', clientId: 'g-client', clientSecret: 'g-secret' })

  it('logs in with a valid token; authorizationParams never replace the protocol parameters', async () => {
    const idp = await google()
    fetchFn = idp.fetch
    const { authorizeUrl, res } = await login('google', idp)
    const p = authorizeUrl.searchParams
    expect(p.get('prompt')).toBe('consent')
    expect(p.get('state')).not.toBe('evil')
    expect(p.get('nonce')).not.toBe('fixed')
    expect(p.get('redirect_uri')).toBe(`${base}/auth/google`)
    expect(await userOf(res)).toMatchObject({ sub: 'google:user-1', name: 'User One', emailVerified: true })
  })

  it('refuses a token signed with another key', async () => {
    const idp = await google()
    const { privateKey: otherKey } = await generateKeyPair('RS256')
    idp.state.sign = claims => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(otherKey)
    fetchFn = idp.fetch
    expect(errorOf((await login('google', idp)).res)).toBe('invalid_id_token')
  })

  it('refuses an unsigned token, an expired one, and one of another issuer', async () => {
    for (const change of [
      (idp: Awaited<ReturnType<typeof google>>) => {
        idp.state.sign = async claims => `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`
      },
      (idp: Awaited<ReturnType<typeof google>>) => {
        idp.state.claims = { exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 7200 }
      },
      (idp: Awaited<ReturnType<typeof google>>) => {
        idp.state.claims = { iss: 'https://accounts.evil.example' }
      },
    ]) {
      const idp = await google()
      change(idp)
      fetchFn = idp.fetch
      expect(errorOf((await login('google', idp)).res)).toBe('invalid_id_token')
    }
  })

  it('refuses a userinfo answer about another subject', async () => {
    const idp = await google()
    idp.state.userinfo = { sub: 'someone-else' }
    fetchFn = idp.fetch
    expect(errorOf((await login('google', idp)).res)).toBe('userinfo_failed')
  })

  it('verifies HS256 id_tokens with the client secret (Auth0)', async () => {
    const a0 = () => fakeIdp({ issuer: 'https://tenant.auth0.example/', tokenUrl: 'https://tenant.auth0.example/oauth/token', jwksUri: 'https://tenant.auth0.example/.well-known/jwks.json', userinfoUrl: 'https://tenant.auth0.example/userinfo', clientId: 'a0-client', clientSecret: 'a0-secret-with-enough-length-0123456789' })
    const good = await a0()
    good.state.sign = claims => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('a0-secret-with-enough-length-0123456789'))
    fetchFn = good.fetch
    expect(await userOf((await login('auth0', good)).res)).toMatchObject({ sub: 'auth0:user-1' })

    const bad = await a0()
    bad.state.sign = claims => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('not-the-client-secret-0123456789-abcdef'))
    fetchFn = bad.fetch
    expect(errorOf((await login('auth0', bad)).res)).toBe('invalid_id_token')
  })
})

describe('state: this browser\'s, unused, started here', () => {
  const google = () => fakeIdp({ issuer: 'https://accounts.google.com', tokenUrl: 'https://oauth2.googleapis.com/token', jwksUri: 'https://www.googleapis.com/oauth2/v3/certs', userinfoUrl: 'https://openidconnect.googleapis.com/v1/userinfo', clientId: 'g-client', clientSecret: 'g-secret' })
  /** A started login stopped at the provider's answer: its callback URL and the cookies the start set. */
  async function started(idp: Awaited<ReturnType<typeof google>>, browserCookies?: string) {
    const start = await fetch(`${base}/auth/google`, { redirect: 'manual', headers: browserCookies ? { cookie: browserCookies } : {} })
    const callback = idp.authorize(new URL(start.headers.get('location')!))
    return { url: `${base}${callback.pathname}${callback.search}`, cookies: cookiesOf(start) }
  }
  const back = (url: string, cookie: string) => fetch(url, { redirect: 'manual', headers: { cookie } })

  it('the login cookies are __Host- prefixed for path / (cookies are Secure here)', async () => {
    const start = await fetch(`${base}/auth/google`, { redirect: 'manual' })
    const lines = start.headers.getSetCookie()
    for (const name of ['__Host-svc-oauth-state', '__Host-svc-oauth-verifier', '__Host-svc-oauth-nonce', '__Host-svc-code']) {
      const line = lines.find(l => l.startsWith(`${name}=`))
      expect(line, name).toMatch(/; Path=\/(;|$)/)
      expect(line).toContain('Secure')
      expect(line).not.toMatch(/Domain/i)
    }
    expect(lines.find(l => l.startsWith('__Host-svc-code='))).toMatch(/Max-Age=600/)
  })

  it('a state that is not the one this browser\'s cookie holds is refused', async () => {
    const idp = await google()
    fetchFn = idp.fetch
    const { url, cookies } = await started(idp)
    // Another login started by the same browser (same binding): its state is not this callback's.
    const other = await started(idp, cookies)
    const swapped = cookies.replace(/__Host-svc-oauth-state=[^;]+/, other.cookies.match(/__Host-svc-oauth-state=[^;]+/)![0])
    expect(errorOf(await back(url, swapped))).toBe('invalid_state')
  })

  it('a callback with another state leaves this browser\'s started login alone: two logins started in one browser', async () => {
    const idp = await google()
    fetchFn = idp.fetch
    const earlier = await started(idp)
    // A second login in the same browser (another tab) replaces the login cookies.
    const later = await started(idp, earlier.cookies)
    const refused = await back(earlier.url, later.cookies)
    expect(errorOf(refused)).toBe('invalid_state')
    expect(refused.headers.getSetCookie().filter(line => line.includes('svc-oauth-'))).toEqual([])
    expect(await userOf(await back(later.url, later.cookies))).toMatchObject({ sub: 'google:user-1' })
    // The callback of the login the cookies belong to ends it, whatever its outcome.
    const third = await started(idp)
    const ended = await back(`${third.url.replace(/code=[^&]+/, 'code=wrong')}`, third.cookies)
    expect(errorOf(ended)).toBe('token_exchange_failed')
    expect(ended.headers.getSetCookie().filter(line => line.includes('svc-oauth-')).every(line => /Max-Age=0/.test(line))).toBe(true)
    expect(ended.headers.getSetCookie().filter(line => line.includes('svc-oauth-'))).toHaveLength(3)
  })

  it('a state is used once: the same callback again is refused', async () => {
    const idp = await google()
    fetchFn = idp.fetch
    const { url, cookies } = await started(idp)
    expect(await userOf(await back(url, cookies))).toMatchObject({ sub: 'google:user-1' })
    expect(errorOf(await back(url, cookies))).toBe('invalid_state')
  })

  it('a state planted in another browser (its cookies without the starting browser\'s binding) is refused', async () => {
    const idp = await google()
    fetchFn = idp.fetch
    const attacker = await started(idp)
    const planted = attacker.cookies.split('; ').filter(c => !c.startsWith('__Host-svc-code=')).join('; ')
    // The victim's browser, with a binding of its own from an earlier visit, or with none.
    const victimBinding = (await started(idp)).cookies.split('; ').find(c => c.startsWith('__Host-svc-code='))!
    expect(errorOf(await back(attacker.url, `${planted}; ${victimBinding}`))).toBe('invalid_state')
    const again = await started(idp)
    expect(errorOf(await back(again.url, again.cookies.split('; ').filter(c => !c.startsWith('__Host-svc-code=')).join('; ')))).toBe('invalid_state')
  })
})

describe('failures', () => {
  it('an unreachable provider ends on the error page with provider_unavailable', async () => {
    const seen: OAuthErrorPayload[] = []
    handlers = { onError: (payload) => {
      seen.push(payload)
    } }
    fetchFn = async () => {
      throw new TypeError('connect ECONNREFUSED')
    }
    const res = await fetch(`${base}/auth/down`, { redirect: 'manual' })
    expect(errorOf(res)).toBe('provider_unavailable')
    expect(res.headers.getSetCookie()).toEqual([])
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatchObject({ provider: 'down', error: 'provider_unavailable', stage: 'start' })
    expect(seen[0]!.cause).toBeInstanceOf(TypeError)
  })

  it('onError may answer itself', async () => {
    handlers = { onError: ({ event, error }) => sendRedirect(event, `/custom-error?reason=${error}`, 302) }
    const res = await fetch(`${base}/auth/google?code=x&state=y`, { redirect: 'manual' })
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe('/custom-error?reason=invalid_state')
  })

  it('an onError that throws still ends on the error page', async () => {
    handlers = { onError: () => {
      throw new Error('handler bug')
    } }
    expect(errorOf(await fetch(`${base}/auth/google?error=access_denied&state=y`, { redirect: 'manual' }))).toBe('invalid_state')
  })

  it('a storage failure ends on the error page with server_error, not a 500', async () => {
    const write = ctx.store.write
    ctx.store.write = async () => {
      throw new Error('store down')
    }
    try {
      expect(errorOf(await fetch(`${base}/auth/google`, { redirect: 'manual' }))).toBe('server_error')
    }
    finally {
      ctx.store.write = write
    }
  })

  it('an unknown provider is a 404, not a redirect', async () => {
    const res = await fetch(`${base}/auth/nope`, { redirect: 'manual' })
    expect(res.status).toBe(404)
  })

  it('the mock provider is off in production (this context is not dev and has no mock)', async () => {
    const res = await fetch(`${base}/auth/mock`, { redirect: 'manual' })
    expect(res.status).toBe(404)
  })
})
