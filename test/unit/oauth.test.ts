import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { calculatePKCECodeChallenge, generateRandomCodeVerifier } from 'oauth4webapi'
import { afterAll, describe, expect, it } from 'vitest'
import { defaultOptions } from '../../src/build/resolve-options'
import { hostRouteExists, oauthRoutes } from '../../src/build/oauth'
import { authorizationServerOf, guardedFetch } from '../../src/runtime/oauth/server/provider-http'
import type { ProviderFetch } from '../../src/runtime/oauth/server/preset'
import { findMockUser } from '../../src/runtime/oauth/server/mock-provider'
import { s256 } from '../../src/runtime/server/lib/store/crypto'
import { isMockEnabled, mapMockProfile, mockUserClaims } from '../../src/runtime/oauth/server/mock-preset'
import { mapCustomProfile, mapDiscordProfile, mapGitHubProfile, mapOidcProfile } from '../../src/runtime/oauth/server/profiles'
import { gitHubApiUrl } from '../../src/runtime/oauth/server/preset-table'
import { oauthProviderNames, providerOptionsOf, resolveProvider } from '../../src/runtime/oauth/server/provider-registry'
import { isErrorCode, isSafeRedirect, sanitizeErrorText, withQueryParams } from '../../src/runtime/server/lib/edge/redirect'
import { validateProviders } from '../../src/runtime/oauth/server/provider-checks'
import { isAllowedProviderUrl } from '../../src/runtime/oauth/server/provider-url'
import type { ProvidersOptions } from '../../src/runtime/types/providers'

const endpoints = defaultOptions.endpoints
const creds = { clientId: 'id', clientSecret: 'secret' }

describe('isSafeRedirect', () => {
  it('accepts same-origin paths', () => {
    for (const value of ['/', '/dashboard', '/a/b?tab=1#x', '/caf%C3%A9', '/search?q=a%2Fb']) expect(isSafeRedirect(value), value).toBe(true)
  })

  it('refuses other origins, including encoded and backslash variants', () => {
    const refused = [
      '', 'dashboard', '//evil.example', '///evil.example', '/\\evil.example', '\\\\evil.example', 'https://evil.example',
      'javascript:alert(1)', '%2F%2Fevil.example', '/%2F%2Fevil.example', '/%252F%252Fevil.example',
      '/%25252F%25252Fevil.example', '/%5Cevil.example', '/%255Cevil.example', '/\t/evil.example', '/%09/evil.example',
      '/%0d%0aSet-Cookie:x=y', '/%E0%A4%A', `/${'a'.repeat(1100)}`,
      // Dot segments that a URL parser resolves to `//evil.example`.
      '/a/..//evil.example', '/.//evil.example', '/%2e%2e//evil.example', '/a/%2E%2E//evil.example', '/a/%252e%252e//evil.example',
    ]
    for (const value of refused) expect(isSafeRedirect(value), value).toBe(false)
    expect(isSafeRedirect(42)).toBe(false)
    expect(isSafeRedirect(['/a'])).toBe(false)
  })
})

describe('redirect helpers', () => {
  it('adds query parameters to a path, keeping its query and fragment', () => {
    expect(withQueryParams('/login', { error: 'access_denied', error_description: 'No way & no' })).toBe('/login?error=access_denied&error_description=No+way+%26+no')
    expect(withQueryParams('/login?lang=de#top', { code: 'c' })).toBe('/login?lang=de&code=c#top')
  })

  it('never turns a path with dot segments into another origin', () => {
    expect(withQueryParams('/a/..//evil.example', { linked: 'x' })).toBe('/evil.example?linked=x')
    expect(withQueryParams('/.//evil.example/p', {})).toBe('/evil.example/p')
  })

  it('keeps provider error texts to the RFC 6749 character set', () => {
    expect(sanitizeErrorText('Denied\n<script>"x"</script>\\')).toBe('Denied <script> x </script>')
    expect(sanitizeErrorText('x'.repeat(500))).toHaveLength(200)
    expect(isErrorCode('access_denied')).toBe(true)
    expect(isErrorCode('<b>')).toBe(false)
    expect(isErrorCode('a'.repeat(80))).toBe(false)
  })
})

describe('provider presets', () => {
  it('google: OpenID Connect with built-in endpoints, or discovery when the issuer is overridden', () => {
    const google = resolveProvider('google', 'google', creds)
    expect(google).toMatchObject({ openid: true, scopes: ['openid', 'email', 'profile'], tokenEndpointAuthMethod: 'client_secret_basic', discoveryIssuer: undefined, local: false })
    expect(google.endpoints).toMatchObject({ issuer: 'https://accounts.google.com', authorization_endpoint: 'https://accounts.google.com/o/oauth2/v2/auth', jwks_uri: 'https://www.googleapis.com/oauth2/v3/certs' })
    const local = resolveProvider('google', 'google', { ...creds, issuer: 'http://127.0.0.1:4000' })
    expect(local.discoveryIssuer).toBe('http://127.0.0.1:4000')
    expect(local.endpoints).toEqual({ issuer: 'http://127.0.0.1:4000' })
    const explicit = resolveProvider('google', 'google', { ...creds, issuer: 'https://idp.example', authorizationUrl: 'https://idp.example/a', tokenUrl: 'https://idp.example/t', jwksUrl: 'https://idp.example/k' })
    expect(explicit.discoveryIssuer).toBeUndefined()
    expect(explicit.endpoints).toMatchObject({ issuer: 'https://idp.example', token_endpoint: 'https://idp.example/t', jwks_uri: 'https://idp.example/k' })
  })

  it('github: OAuth 2.0 scopes, client_secret_post', () => {
    const github = resolveProvider('github', 'github', creds)
    expect(github).toMatchObject({ openid: false, scopes: ['user:email', 'read:user'], tokenEndpointAuthMethod: 'client_secret_post' })
    expect(github.endpoints).toMatchObject({ authorization_endpoint: 'https://github.com/login/oauth/authorize', token_endpoint: 'https://github.com/login/oauth/access_token' })
  })

  it('keycloak: realm endpoints from baseUrl and realm, or discovery from the realm URL as issuer', () => {
    const keycloak = resolveProvider('keycloak', 'keycloak', { ...creds, baseUrl: 'https://sso.example/', realm: 'main' })
    expect(keycloak).toMatchObject({ openid: true, discoveryIssuer: undefined, tokenEndpointAuthMethod: 'client_secret_basic' })
    expect(keycloak.endpoints).toMatchObject({
      issuer: 'https://sso.example/realms/main',
      authorization_endpoint: 'https://sso.example/realms/main/protocol/openid-connect/auth',
      token_endpoint: 'https://sso.example/realms/main/protocol/openid-connect/token',
      userinfo_endpoint: 'https://sso.example/realms/main/protocol/openid-connect/userinfo',
      jwks_uri: 'https://sso.example/realms/main/protocol/openid-connect/certs',
    })
    expect(resolveProvider('keycloak', 'keycloak', { ...creds, issuer: 'https://sso.example/realms/main' })).toMatchObject({ discoveryIssuer: 'https://sso.example/realms/main', endpoints: { issuer: 'https://sso.example/realms/main' } })
  })

  it('gitlab: gitlab.com by default, a self-managed instance by baseUrl', () => {
    expect(resolveProvider('gitlab', 'gitlab', creds).endpoints).toMatchObject({ issuer: 'https://gitlab.com', authorization_endpoint: 'https://gitlab.com/oauth/authorize', jwks_uri: 'https://gitlab.com/oauth/discovery/keys' })
    const own = resolveProvider('gitlab', 'gitlab', { ...creds, baseUrl: 'https://git.example' })
    expect(own).toMatchObject({ openid: true, scopes: ['openid', 'profile', 'email'] })
    expect(own.endpoints).toMatchObject({ issuer: 'https://git.example', token_endpoint: 'https://git.example/oauth/token', userinfo_endpoint: 'https://git.example/oauth/userinfo' })
  })

  it('discord: OAuth 2.0 without OpenID Connect', () => {
    const discord = resolveProvider('discord', 'discord', creds)
    expect(discord).toMatchObject({ openid: false, scopes: ['identify', 'email'], tokenEndpointAuthMethod: 'client_secret_post' })
    expect(discord.endpoints).toMatchObject({ authorization_endpoint: 'https://discord.com/oauth2/authorize', token_endpoint: 'https://discord.com/api/oauth2/token', userinfo_endpoint: 'https://discord.com/api/users/@me' })
  })

  it('auth0: endpoints of the tenant domain, audience as an authorization parameter', () => {
    const auth0 = resolveProvider('auth0', 'auth0', { ...creds, domain: 'acme.eu.auth0.com', audience: 'https://api.acme', authorizationParams: { prompt: 'login' } })
    expect(auth0.endpoints).toMatchObject({ issuer: 'https://acme.eu.auth0.com/', authorization_endpoint: 'https://acme.eu.auth0.com/authorize', token_endpoint: 'https://acme.eu.auth0.com/oauth/token', jwks_uri: 'https://acme.eu.auth0.com/.well-known/jwks.json' })
    expect(auth0.authorizationParams).toEqual({ audience: 'https://api.acme', prompt: 'login' })
    expect(auth0.tokenEndpointAuthMethod).toBe('client_secret_post')
    const byIssuer = resolveProvider('auth0', 'auth0', { ...creds, issuer: 'https://login.acme.example/' })
    expect(byIssuer).toMatchObject({ discoveryIssuer: 'https://login.acme.example/', endpoints: { issuer: 'https://login.acme.example/' } })
  })

  it('microsoft: tenant in the endpoints; multi-tenant issuer for common, organizations and consumers', () => {
    const common = resolveProvider('microsoft', 'microsoft', creds)
    expect(common.multiTenantIssuer).toBe(true)
    expect(common.endpoints).toMatchObject({ issuer: 'https://login.microsoftonline.com/{tenantid}/v2.0', authorization_endpoint: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize' })
    const single = resolveProvider('microsoft', 'microsoft', { ...creds, tenant: 'contoso.onmicrosoft.com' })
    expect(single.multiTenantIssuer).toBe(false)
    expect(single.endpoints.issuer).toBe('https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0')
    expect(single.endpoints.token_endpoint).toBe('https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token')
    expect(resolveProvider('microsoft', 'microsoft', { ...creds, issuer: 'http://127.0.0.1:1' }).multiTenantIssuer).toBe(false)
  })

  it('custom: discovery by issuer, or explicit endpoints as plain OAuth 2.0', () => {
    const oidc = resolveProvider('acme', 'custom', { ...creds, issuer: 'https://id.acme' })
    expect(oidc).toMatchObject({ openid: true, discoveryIssuer: 'https://id.acme' })
    const plain = resolveProvider('acme', 'custom', { ...creds, authorizationUrl: 'https://a/authorize', tokenUrl: 'https://a/token', userInfoUrl: 'https://a/me', scopes: ['read'] })
    expect(plain).toMatchObject({ openid: false, discoveryIssuer: undefined, scopes: ['read'] })
    expect(plain.endpoints).toEqual({ authorization_endpoint: 'https://a/authorize', token_endpoint: 'https://a/token', userinfo_endpoint: 'https://a/me' })
  })

  it('a scope list without openid turns OpenID Connect off', () => {
    expect(resolveProvider('google', 'google', { ...creds, scopes: ['email'] }).openid).toBe(false)
  })

  it('mock: local endpoints and default client', () => {
    const mock = resolveProvider('mock', 'mock', { mockUsers: [] })
    expect(mock).toMatchObject({ clientId: 'mock-client', clientSecret: 'mock-secret', openid: false, local: true, forwardedQuery: { user: 'login_hint', mock_error: 'mock_error' } })
    expect(mock.endpoints).toMatchObject({ authorization_endpoint: '/mock/authorize', token_endpoint: '/mock/token', userinfo_endpoint: '/mock/userinfo' })
  })
})

describe('profiles', () => {
  it('OpenID Connect: standard claims without protocol claims', () => {
    const user = mapOidcProfile({ sub: 's1', email: 'a@x', email_verified: true, given_name: 'Ada', family_name: 'L', iss: 'i', aud: 'a', nonce: 'n', at_hash: 'h', exp: 1, hd: 'x.example' })
    expect(user).toEqual({ sub: 's1', email: 'a@x', email_verified: true, emailVerified: true, given_name: 'Ada', family_name: 'L', name: 'Ada L', picture: undefined, hd: 'x.example' })
    expect(mapOidcProfile({ sub: 's', email: 'e@x' }).emailVerified).toBe(false)
    expect(mapOidcProfile({ sub: 's', preferred_username: 'pu' }).name).toBe('pu')
  })

  it('GitHub: the public email if verified, else the primary verified one', () => {
    const emails = [
      { email: 'unverified-primary@x', primary: true, verified: false },
      { email: 'old@x', primary: false, verified: true },
    ]
    expect(mapGitHubProfile({ id: 7, login: 'octo', email: null }, emails)).toMatchObject({ sub: '7', login: 'octo', name: 'octo', email: undefined, emailVerified: false })
    expect(mapGitHubProfile({ id: 7, login: 'octo', email: null }, [...emails, { email: 'main@x', primary: true, verified: true }])).toMatchObject({ email: 'main@x', emailVerified: true })
    expect(mapGitHubProfile({ id: 7, login: 'o', email: 'OLD@x' }, emails)).toMatchObject({ email: 'old@x', emailVerified: true })
    // Without the email list (scope not granted) the public email is kept, not marked verified.
    expect(mapGitHubProfile({ id: 7, login: 'o', email: 'pub@x', name: 'N', avatar_url: 'https://a' }, undefined)).toMatchObject({ email: 'pub@x', emailVerified: false, name: 'N', picture: 'https://a' })
  })

  it('custom: OpenID Connect claims, `id` without `sub`, and what profileMapping names', () => {
    expect(mapCustomProfile({ sub: 's', id: 'i', email: 'e@x', email_verified: true, name: 'N' })).toMatchObject({ sub: 's', email: 'e@x', emailVerified: true, name: 'N' })
    expect(mapCustomProfile({ id: 42, username: 'u', email: 'e@x', verified: true, avatar_url: 'https://a' })).toMatchObject({ sub: '42', name: 'u', emailVerified: false, picture: 'https://a' })
    const mapped = mapCustomProfile({ data: { uid: 'x1', display: 'X', mail: 'x@x', ok: 'true' } }, { sub: 'data.uid', name: ['data.nick', 'data.display'], email: 'data.mail', emailVerified: 'data.ok' })
    expect(mapped).toMatchObject({ sub: 'x1', name: 'X', email: 'x@x', emailVerified: true })
    expect(mapCustomProfile({ id: {}, constructor: 'c' }, { sub: ['id', 'constructor.name'] }).sub).toBeUndefined()
    // A verified flag about another email never verifies a remapped one; Entra's flag is Entra's.
    expect(mapCustomProfile({ id: 'a', email: 'own@x', email_verified: true, contact: 'victim@y' }, { email: 'contact' })).toMatchObject({ email: 'victim@y', emailVerified: false })
    expect(mapCustomProfile({ id: 'a', email: 'e@x', xms_edov: true }).emailVerified).toBe(false)
    expect(mapCustomProfile({ id: 'a', contact: 'c@x', contact_ok: true }, { email: 'contact', emailVerified: 'contact_ok' }).emailVerified).toBe(true)
  })

  it('discord: sub from id, display name, email only when verified, avatar on the CDN', () => {
    const user = { id: '80351110224678912', username: 'nelly', global_name: 'Nelly', email: 'n@x', verified: true, avatar: 'a_1234' }
    expect(mapDiscordProfile(user)).toEqual({ sub: '80351110224678912', username: 'nelly', name: 'Nelly', email: 'n@x', emailVerified: true, picture: 'https://cdn.discordapp.com/avatars/80351110224678912/a_1234.gif' })
    expect(mapDiscordProfile({ ...user, verified: false, global_name: null, avatar: '../x' })).toMatchObject({ name: 'nelly', email: undefined, emailVerified: false, picture: 'https://cdn.discordapp.com/embed/avatars/5.png' })
  })

  it('mock: the user as configured; extra keys are its claims', () => {
    const user = { sub: 'm1', email: 'm@x', name: 'M', picture: 'p', role: 'admin', tags: ['a'] }
    expect(mapMockProfile(user)).toMatchObject({ sub: 'm1', role: 'admin', emailVerified: true })
    expect(mockUserClaims(user)).toEqual({ role: 'admin', tags: ['a'] })
  })
})

describe('mock users', () => {
  const users = [
    { sub: 'a', email: 'A@x.example', name: 'A' },
    { sub: 'b', email: 'b@x.example', name: 'B' },
    { sub: '7', email: 'seven@x.example', name: 'Seven' },
  ]
  it('chooses by index, sub or email, else the default user', () => {
    expect(findMockUser(users, undefined, 1)?.sub).toBe('b')
    expect(findMockUser(users, '', 0)?.sub).toBe('a')
    expect(findMockUser(users, '2')?.sub).toBe('7')
    expect(findMockUser(users, '7')?.sub).toBe('7')
    expect(findMockUser(users, 'b')?.sub).toBe('b')
    expect(findMockUser(users, 'a@X.example')?.sub).toBe('a')
    expect(findMockUser(users, 'nobody')).toBeUndefined()
  })

  it('is served in development, in production only with enableInProduction', () => {
    const mock = { mockUsers: users }
    expect(isMockEnabled({ providers: { mock } }, true)).toBe(true)
    expect(isMockEnabled({ providers: { mock } }, false)).toBe(false)
    expect(isMockEnabled({ providers: { mock: { ...mock, enableInProduction: true } } }, false)).toBe(true)
    expect(isMockEnabled({ providers: {} }, true)).toBe(false)
  })

  it('checks PKCE S256 as the client library computes it', async () => {
    for (let i = 0; i < 5; i++) {
      const verifier = generateRandomCodeVerifier()
      expect(s256(verifier)).toBe(await calculatePKCECodeChallenge(verifier))
    }
    expect(s256('a')).not.toBe(s256('b'))
  })
})

describe('validateProviders', () => {
  const errorsOf = (providers: unknown, secretsRequired = false) => validateProviders(providers as ProvidersOptions, endpoints, { secretsRequired }).errors

  it('accepts a complete configuration', () => {
    const result = validateProviders({
      google: creds,
      github: creds,
      auth0: { ...creds, domain: 'acme.auth0.com' },
      microsoft: { ...creds, tenant: 'common' },
      mock: { mockUsers: [{ sub: 'a', email: 'a@x', name: 'A' }] },
      custom: [{ ...creds, name: 'acme', issuer: 'https://id.acme' }, { ...creds, name: 'plain_2', authorizationUrl: 'https://p/a', tokenUrl: 'https://p/t', userInfoUrl: 'https://p/u' }],
    }, endpoints, { secretsRequired: true })
    expect(result).toEqual({ errors: [], warnings: [] })
    const more = validateProviders({
      auth0: { ...creds, issuer: 'https://login.acme.example/' },
      keycloak: { ...creds, baseUrl: 'https://sso.example', realm: 'main' },
      gitlab: creds,
      discord: creds,
      custom: { acme: { ...creds, issuer: 'https://id.acme' }, chat: { ...creds, authorizationUrl: 'https://c/a', tokenUrl: 'https://c/t', userInfoUrl: 'https://c/u', profileMapping: { sub: 'id', name: ['global_name', 'username'] } } },
    }, endpoints, { secretsRequired: true })
    expect(more).toEqual({ errors: [], warnings: [] })
  })

  it('a custom provider may take the name of a built-in one that is not configured', () => {
    const providers = { custom: { keycloak: { ...creds, issuer: 'https://sso.example/realms/main' } } }
    expect(validateProviders(providers, endpoints).errors).toEqual([])
    expect(providerOptionsOf(providers, 'keycloak')).toMatchObject({ type: 'custom', options: { issuer: 'https://sso.example/realms/main' } })
    expect(validateProviders({ ...providers, keycloak: { ...creds, baseUrl: 'https://x', realm: 'r' } }, endpoints).errors).toEqual(['svcAuth.providers.custom.keycloak.name "keycloak" is reserved: svcAuth.providers.keycloak is configured.'])
  })

  it('requires client ids; a missing secret is a warning at build time and an error at runtime', () => {
    expect(errorsOf({ google: { clientSecret: 's' } })).toEqual(['svcAuth.providers.google.clientId is required.'])
    const build = validateProviders({ google: { clientId: 'id' } } as ProvidersOptions, endpoints)
    expect(build.errors).toEqual([])
    expect(build.warnings[0]).toMatch(/NUXT_SVC_AUTH_PROVIDERS_GOOGLE_CLIENT_SECRET/)
    expect(errorsOf({ google: { clientId: 'id' } }, true)).toEqual(['svcAuth.providers.google.clientSecret is required.'])
  })

  it('names every mistake', () => {
    const errors = errorsOf({
      auth0: creds,
      microsoft: { ...creds, tenant: 'a/b' },
      github: { ...creds, scopes: 'user' },
      google: { ...creds, issuer: 'http://accounts.example', authorizationParams: { x: 1 } },
      mock: { mockUsers: [{ sub: 'a', email: 'a@x' }, { sub: 'a', email: 'b@x', name: 'B' }], defaultUser: 5 },
      custom: [
        { ...creds, name: 'bad name', issuer: 'https://x' },
        { ...creds, name: 'google', issuer: 'https://x' },
        { ...creds, name: 'twice', issuer: 'https://x' },
        { ...creds, name: 'twice', issuer: 'https://x' },
        { ...creds, name: 'noendpoints' },
        { ...creds, name: 'plainoidc', authorizationUrl: 'https://p/a', tokenUrl: 'https://p/t', userInfoUrl: 'https://p/u', scopes: ['openid'] },
        { ...creds, name: 'callback', issuer: 'https://x' },
        { ...creds, name: 'mapped', issuer: 'https://x', profileMapping: { sub: '', nick: 'n' } },
      ],
      keycloak: { ...creds, baseUrl: 'https://sso.example' },
      discord: { ...creds, baseUrl: 'http://discord.example' },
    })
    const expected = [
      /auth0\.domain is required/,
      /microsoft\.tenant/,
      /github\.scopes/,
      /google\.issuer must be an absolute https URL/,
      /google\.authorizationParams/,
      /mockUsers\[0\]\.name is required/,
      /mockUsers\[1\]\.sub "a" is not unique/,
      /defaultUser must be an index/,
      /custom\[0\]\.name is required/,
      /"google" is reserved/,
      /"twice" is not unique/,
      /"noendpoints"\) needs an OpenID Connect issuer/,
      /"plainoidc"\) requests the openid scope/,
      /login route \/auth\/callback is the same as svcAuth\.endpoints\.callbackPath/,
      /custom\[7\]\.profileMapping\.sub must name a profile field/,
      /custom\[7\]\.profileMapping\.nick is not one of/,
      /keycloak\.realm is required \(or set svcAuth\.providers\.keycloak\.issuer\)/,
      /discord\.baseUrl must be an absolute https URL/,
    ]
    for (const pattern of expected) expect(errors.some(e => pattern.test(e)), String(pattern)).toBe(true)
    expect(errors).toHaveLength(expected.length)
  })

  it('allows plain http only on loopback', () => {
    expect(isAllowedProviderUrl('https://idp.example')).toBe(true)
    expect(isAllowedProviderUrl('http://127.0.0.1:8080')).toBe(true)
    expect(isAllowedProviderUrl('http://localhost:8080/realms/x')).toBe(true)
    expect(isAllowedProviderUrl('http://[::1]:8080')).toBe(true)
    for (const url of ['http://idp.example', 'ftp://idp.example', 'file:///etc/passwd', 'https://user:pw@idp.example', 'not a url']) {
      expect(isAllowedProviderUrl(url), url).toBe(false)
    }
  })

  it('the guarded fetch never contacts a refused URL', async () => {
    let called = 0
    const fetchFn = guardedFetch(async () => {
      called++
      return new Response('{}')
    })
    await expect(fetchFn('http://idp.example/token', { method: 'POST' })).rejects.toThrow(/https/)
    await expect(fetchFn('file:///etc/passwd', {})).rejects.toThrow()
    expect(called).toBe(0)
    await fetchFn('https://idp.example/token', {})
    expect(called).toBe(1)
  })
})

describe('routes', () => {
  const dirs: string[] = []
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  it('registers one login route per provider, the back-channel logout and the mock endpoints, skipping host routes', () => {
    const providers: ProvidersOptions = { google: creds, mock: { mockUsers: [] }, custom: [{ ...creds, name: 'acme', issuer: 'https://id' }] }
    expect(oauthProviderNames(providers)).toEqual(['google', 'mock', 'acme'])
    const routes = oauthRoutes({ providers, endpoints: { ...endpoints, loginPath: '/login/' } }, r => r === '/login/google')
    expect(routes.map(r => `${r.method} ${r.route} ${r.handler}`)).toEqual([
      'get /login/mock oauth/server/routes/login.get',
      'get /login/acme oauth/server/routes/login.get',
      'post /auth/backchannel-logout/:provider oauth/server/routes/backchannel-logout.post',
      'get /mock/authorize oauth/server/routes/mock-authorize.get',
      'post /mock/token oauth/server/routes/mock-token.post',
      'get /mock/userinfo oauth/server/routes/mock-userinfo.get',
    ])
    expect(oauthRoutes({ providers: { google: creds }, endpoints })).toEqual([
      { route: '/auth/google', method: 'get', handler: 'oauth/server/routes/login.get' },
      { route: '/auth/backchannel-logout/:provider', method: 'post', handler: 'oauth/server/routes/backchannel-logout.post' },
    ])
    // The mock alone: no provider can send a logout token.
    expect(oauthRoutes({ providers: { mock: { mockUsers: [] } }, endpoints }).map(r => r.route)).not.toContain('/auth/backchannel-logout/:provider')
  })

  it('finds host route files in any server directory', () => {
    const a = mkdtempSync(join(tmpdir(), 'svc-oauth-a-'))
    const b = mkdtempSync(join(tmpdir(), 'svc-oauth-b-'))
    dirs.push(a, b)
    mkdirSync(join(a, 'routes/auth'), { recursive: true })
    writeFileSync(join(a, 'routes/auth/google.get.ts'), '')
    mkdirSync(join(b, 'routes/auth/acme'), { recursive: true })
    writeFileSync(join(b, 'routes/auth/acme/index.ts'), '')
    mkdirSync(join(b, 'api/login'), { recursive: true })
    writeFileSync(join(b, 'api/login/github.get.js'), '')
    expect(hostRouteExists([a, b], '/auth/google')).toBe(true)
    expect(hostRouteExists([a, b], '/auth/acme')).toBe(true)
    expect(hostRouteExists([a, b], '/api/login/github')).toBe(true)
    expect(hostRouteExists([a, b], '/auth/github')).toBe(false)
    writeFileSync(join(a, 'routes/auth/github.post.ts'), '')
    expect(hostRouteExists([a, b], '/auth/github')).toBe(false)
  })
})

describe('provider endpoints', () => {
  const creds = { clientId: 'id', clientSecret: 'secret' }
  const refuse: ProviderFetch = () => Promise.reject(new Error('no request may be sent'))

  it('a provider other than the mock never resolves an endpoint on the request\'s origin', async () => {
    // A scheme-less base URL (e.g. set from the environment) makes relative endpoints.
    const keycloak = resolveProvider('keycloak', 'keycloak', { ...creds, baseUrl: 'sso.example.com', realm: 'r' })
    await expect(authorizationServerOf(keycloak, 'https://attacker.example', refuse)).rejects.toThrow(/not an absolute URL/)
    const custom = resolveProvider('acme', 'custom', { ...creds, authorizationUrl: '/authorize', tokenUrl: '/token' })
    await expect(authorizationServerOf(custom, 'https://attacker.example', refuse)).rejects.toThrow(/not an absolute URL/)
  })

  it('the mock provider, served by the app itself, resolves its paths on the app\'s origin', async () => {
    const mock = resolveProvider('mock', 'mock', {})
    const server = await authorizationServerOf(mock, 'http://localhost:3000', refuse)
    expect(server.token_endpoint).toBe('http://localhost:3000/mock/token')
  })
})

describe('GitHub REST API of a GitHub provider', () => {
  const creds = { clientId: 'id', clientSecret: 'secret' }
  it('is the public API for github.com, the server\'s own /api/v3 for GitHub Enterprise Server', () => {
    expect(gitHubApiUrl({ ...creds })).toBe('https://api.github.com')
    expect(gitHubApiUrl({ ...creds, apiUrl: 'https://api.github.com' })).toBe('https://api.github.com')
    // A token issued by another server is never sent to api.github.com.
    expect(gitHubApiUrl({ ...creds, issuer: 'https://ghe.example.com', apiUrl: 'https://api.github.com' })).toBe('https://ghe.example.com/api/v3')
    expect(gitHubApiUrl({ ...creds, tokenUrl: 'https://ghe.example.com/login/oauth/access_token' })).toBe('https://ghe.example.com/api/v3')
    expect(gitHubApiUrl({ ...creds, issuer: 'https://ghe.example.com', apiUrl: 'https://ghe.example.com/api/v3/' })).toBe('https://ghe.example.com/api/v3')
  })
})
