import { generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { resolveOptions } from '../../src/build/resolve-options'
import { createAuthContext, type AuthContext } from '../../src/runtime/server/lib/core/context'
import { resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { clearProviderCaches } from '../../src/runtime/oauth/server/provider-http'
import { consumeAuthCode } from '../../src/runtime/server/lib/core/records/auth-code'
import type { OAuthEventHandlerOptions } from '../../src/runtime/oauth/oauth-types'
import { startOAuthApp, type OAuthApp } from './helpers/oauth-app'
import { DISCORD_PATHS, GITHUB_PATHS, GITLAB_PATHS, keycloakPaths, startFakeProvider, type FakeProvider } from './helpers/fake-provider'
import { features } from './helpers/features'

const DISCORD_USER = { id: '80351110224678912', username: 'nelly', global_name: 'Nelly', email: 'nelly@example.com', verified: true, avatar: '8342729096ea3675442027381ff50dfe' }

let ctx: AuthContext
let app: OAuthApp
let base: string
let handlers: OAuthEventHandlerOptions<object> = {}
const fakes: Record<'keycloak' | 'gitlab' | 'discord' | 'chat' | 'github', FakeProvider> = {} as never

beforeAll(async () => {
  fakes.keycloak = await startFakeProvider({ paths: keycloakPaths('acme'), clientId: 'kc-client', clientSecret: 'kc-secret', subject: 'f:1234', profile: { email: 'kc@example.com', email_verified: true, name: 'Kay Cloak', preferred_username: 'kay' } })
  fakes.gitlab = await startFakeProvider({ paths: GITLAB_PATHS, clientId: 'gl-client', clientSecret: 'gl-secret', subject: '4242', profile: { email: 'gl@example.com', email_verified: true, name: 'Gil Lab', nickname: 'gil', picture: 'https://gitlab.example/gil.png' } })
  fakes.discord = await startFakeProvider({ paths: DISCORD_PATHS, clientId: 'dc-client', clientSecret: 'dc-secret', profile: DISCORD_USER })
  fakes.chat = await startFakeProvider({ paths: DISCORD_PATHS, clientId: 'chat-client', clientSecret: 'chat-secret', profile: { id: 77, username: 'plain', email: 'plain@example.com', verified: true, avatar_url: 'https://chat.example/a.png' } })
  fakes.github = await startFakeProvider({
    paths: GITHUB_PATHS,
    clientId: 'gh-client',
    clientSecret: 'gh-secret',
    profile: { id: 583231, login: 'octocat', name: null, email: null, avatar_url: 'https://avatars.example/1' },
    resources: { '/user/emails': [{ email: 'octo@example.com', primary: true, verified: true }] },
  })
  const chat = fakes.chat.base
  const options = resolveOptions({
    token: { secret: 'oauth-presets-unit-secret-0123456789-abcdefgh' },
    tokenRefresh: { storage: { driver: 'memory' } },
    logging: { level: 'silent' },
    redirect: { error: '/oops' },
    providers: {
      keycloak: { clientId: 'kc-client', clientSecret: 'kc-secret', baseUrl: fakes.keycloak.base, realm: 'acme' },
      gitlab: { clientId: 'gl-client', clientSecret: 'gl-secret', baseUrl: fakes.gitlab.base },
      discord: { clientId: 'dc-client', clientSecret: 'dc-secret', baseUrl: fakes.discord.base },
      github: { clientId: 'gh-client', clientSecret: 'gh-secret', authorizationUrl: `${fakes.github.base}/login/oauth/authorize`, tokenUrl: `${fakes.github.base}/login/oauth/access_token`, apiUrl: fakes.github.base },
      custom: {
        chat: {
          clientId: 'chat-client',
          clientSecret: 'chat-secret',
          authorizationUrl: `${chat}/oauth2/authorize`,
          tokenUrl: `${chat}/api/oauth2/token`,
          userInfoUrl: `${chat}/api/users/@me`,
          scopes: ['identify', 'email'],
          profileMapping: { sub: 'id', name: ['global_name', 'username'], emailVerified: 'verified', picture: 'avatar_url' },
        },
        plainchat: {
          clientId: 'chat-client',
          clientSecret: 'chat-secret',
          authorizationUrl: `${chat}/oauth2/authorize`,
          tokenUrl: `${chat}/api/oauth2/token`,
          userInfoUrl: `${chat}/api/users/@me`,
          scopes: ['identify'],
        },
      },
    },
  }, false)
  ctx = await createAuthContext(options, { dev: true, features })
  app = await startOAuthApp(ctx, () => ({ handlers }))
  base = app.base
})

afterAll(async () => {
  await app.close()
  await Promise.all(Object.values(fakes).map(f => f.close()))
  await ctx.dispose()
})

beforeEach(() => {
  resetAuthHandlers()
  clearProviderCaches()
  handlers = {}
  for (const fake of Object.values(fakes)) fake.reset()
})

const cookiesOf = (res: Response) => res.headers.getSetCookie().map(l => l.split(';')[0]).filter(c => !c!.endsWith('=')).join('; ')

/** start → redirect to the provider → the provider redirects back with code and state → the app's answer. */
async function login(name: string) {
  const start = await fetch(`${base}/auth/${name}`, { redirect: 'manual' })
  expect(start.status, `start of ${name}`).toBe(302)
  const authorizeUrl = new URL(start.headers.get('location')!)
  const atProvider = await fetch(authorizeUrl, { redirect: 'manual' })
  expect(atProvider.status, `authorization at ${authorizeUrl.href}`).toBe(302)
  const callback = new URL(atProvider.headers.get('location')!)
  expect(callback.origin).toBe(base)
  const res = await fetch(callback, { redirect: 'manual', headers: { cookie: cookiesOf(start) } })
  return { authorizeUrl, res }
}

async function userOf(res: Response) {
  expect(res.status).toBe(302)
  const location = new URL(res.headers.get('location')!, base)
  expect(location.pathname, location.search).toBe('/auth/callback')
  const record = await consumeAuthCode(ctx, location.searchParams.get('code')!)
  return record!.user
}

function errorOf(res: Response): string | null {
  expect(res.status).toBe(302)
  const location = new URL(res.headers.get('location')!, base)
  expect(location.pathname).toBe('/oops')
  return location.searchParams.get('error')
}

describe('Keycloak (OpenID Connect with a realm URL)', () => {
  it('logs in through the realm\'s endpoints from baseUrl and realm, with PKCE, nonce and a validated id_token', async () => {
    const { authorizeUrl, res } = await login('keycloak')
    expect(authorizeUrl.href.split('?')[0]).toBe(`${fakes.keycloak.base}/realms/acme/protocol/openid-connect/auth`)
    expect(authorizeUrl.searchParams.get('scope')).toBe('openid email profile')
    expect(authorizeUrl.searchParams.get('nonce')).toBeTruthy()
    expect(await userOf(res)).toMatchObject({ sub: 'keycloak:f:1234', email: 'kc@example.com', emailVerified: true, name: 'Kay Cloak', preferred_username: 'kay' })
    expect(fakes.keycloak.clientAuth).toEqual(['basic'])
    // Built-in endpoints: no discovery request; the access token only went to userinfo.
    expect(fakes.keycloak.seen.map(r => r.path)).not.toContain('/realms/acme/.well-known/openid-configuration')
    expect(fakes.keycloak.bearerPaths()).toEqual(['/realms/acme/protocol/openid-connect/userinfo'])
  })

  it('discovers the endpoints when the realm URL is given as issuer', async () => {
    handlers = { config: { issuer: `${fakes.keycloak.base}/realms/acme`, baseUrl: '', realm: '' } }
    expect(await userOf((await login('keycloak')).res)).toMatchObject({ sub: 'keycloak:f:1234' })
    expect(fakes.keycloak.seen[0]!.path).toBe('/realms/acme/.well-known/openid-configuration')
  })

  it('refuses an id_token signed with another key, and one with another nonce', async () => {
    const { privateKey } = await generateKeyPair('RS256')
    fakes.keycloak.change.sign = claims => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'fake-1' }).sign(privateKey)
    expect(errorOf((await login('keycloak')).res)).toBe('invalid_id_token')
    fakes.keycloak.reset()
    fakes.keycloak.change.claims = { nonce: 'another' }
    expect(errorOf((await login('keycloak')).res)).toBe('invalid_id_token')
  })
})

describe('GitLab (OpenID Connect)', () => {
  it('logs in through the instance at baseUrl', async () => {
    const { authorizeUrl, res } = await login('gitlab')
    expect(authorizeUrl.href.split('?')[0]).toBe(`${fakes.gitlab.base}/oauth/authorize`)
    expect(authorizeUrl.searchParams.get('scope')).toBe('openid profile email')
    expect(await userOf(res)).toMatchObject({ sub: 'gitlab:4242', email: 'gl@example.com', emailVerified: true, name: 'Gil Lab', nickname: 'gil', picture: 'https://gitlab.example/gil.png' })
    expect(fakes.gitlab.seen.map(r => `${r.method} ${r.path}`)).toEqual(['GET /oauth/authorize', 'POST /oauth/token', 'GET /oauth/discovery/keys', 'GET /oauth/userinfo'])
  })

  it('discovers the endpoints from an issuer; a userinfo answer about another subject fails', async () => {
    handlers = { config: { issuer: fakes.gitlab.base } }
    expect(await userOf((await login('gitlab')).res)).toMatchObject({ sub: 'gitlab:4242' })
    expect(fakes.gitlab.seen[0]!.path).toBe('/.well-known/openid-configuration')
    fakes.gitlab.change.profile = { sub: 'someone-else' }
    expect(errorOf((await login('gitlab')).res)).toBe('userinfo_failed')
  })
})

describe('Discord (OAuth 2.0 without OpenID Connect)', () => {
  it('maps /api/users/@me: sub from id, display name, verified email, CDN avatar', async () => {
    const { authorizeUrl, res } = await login('discord')
    expect(authorizeUrl.href.split('?')[0]).toBe(`${fakes.discord.base}/oauth2/authorize`)
    expect(authorizeUrl.searchParams.get('scope')).toBe('identify email')
    expect(authorizeUrl.searchParams.has('nonce')).toBe(false)
    expect(authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256')
    expect(await userOf(res)).toMatchObject({
      sub: `discord:${DISCORD_USER.id}`,
      username: 'nelly',
      name: 'Nelly',
      email: 'nelly@example.com',
      emailVerified: true,
      picture: `https://cdn.discordapp.com/avatars/${DISCORD_USER.id}/${DISCORD_USER.avatar}.png`,
    })
    expect(fakes.discord.clientAuth).toEqual(['post'])
    expect(fakes.discord.bearerPaths()).toEqual(['/api/users/@me'])
  })

  it('keeps an unverified email out; falls back to the username and the default avatar', async () => {
    fakes.discord.change.profile = { verified: false, global_name: null, avatar: null }
    const user = await userOf((await login('discord')).res)
    expect(user).toMatchObject({ name: 'nelly', emailVerified: false, picture: `https://cdn.discordapp.com/embed/avatars/${Number((BigInt(DISCORD_USER.id) >> 22n) % 6n)}.png` })
    expect(user.email).toBeUndefined()
  })

  it('a profile without an id fails with userinfo_failed', async () => {
    fakes.discord.change.profile = { id: null }
    expect(errorOf((await login('discord')).res)).toBe('userinfo_failed')
  })
})

describe('custom OAuth 2.0 providers whose profile has no sub', () => {
  it('map the profile as configured (profileMapping)', async () => {
    const user = await userOf((await login('chat')).res)
    expect(user).toMatchObject({ sub: 'chat:77', name: 'plain', email: 'plain@example.com', emailVerified: true, picture: 'https://chat.example/a.png' })
    expect(fakes.chat.bearerPaths()).toEqual(['/api/users/@me'])
  })

  it('take `id` as the subject by default; email unverified without a mapping', async () => {
    const user = await userOf((await login('plainchat')).res)
    expect(user).toMatchObject({ sub: 'plainchat:77', name: 'plain', email: 'plain@example.com', emailVerified: false })
  })
})

describe('GitHub (its profile fetching lives in its preset)', () => {
  it('reads /user and /user/emails of apiUrl with the token, nowhere else', async () => {
    const user = await userOf((await login('github')).res)
    expect(user).toMatchObject({ sub: 'github:583231', login: 'octocat', name: 'octocat', email: 'octo@example.com', emailVerified: true })
    expect(fakes.github.clientAuth).toEqual(['post'])
    expect(fakes.github.bearerPaths()).toEqual(['/user', '/user/emails'])
  })
})
