import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { jarBrowser } from '../helpers/cookie-jar'
import { resolveOptions } from '../../src/build/resolve-options'
import { defineAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { peekAuthContext } from '../../src/runtime/server/utils/auth-context'
import { clearProviderCaches } from '../../src/runtime/oauth/server/provider-http'
import type { ModuleOptions } from '../../src/runtime/types/options'
import type { AuthUser, PasskeyCredential, PasswordUser } from '../../src/runtime/types/auth'
import { createTestAuth } from '../../src/testing/test-tokens'
import { memoryPasswordAccounts, serveModuleForFile } from './helpers/module-router'
import { memoryIdentities } from './helpers/memory-identities'
import { DISCORD_PATHS, startFakeProvider, type FakeProvider } from './helpers/fake-provider'
import { nitro } from './helpers/nitro-stub'

// Linking accounts through the module's real routes on a plain h3 app on a loopback port (Nitro's runtime is
// nitro-stub.ts): the mock provider to log in, a fake OAuth provider `acme` to link, password accounts in memory.
vi.mock('nitropack/runtime', () => import('./helpers/nitro-stub'))

const SECRET = 'identities-flow-secret-0123456789-abcdefghij'
let acme: FakeProvider
beforeAll(async () => {
  acme = await startFakeProvider({ paths: DISCORD_PATHS, clientId: 'acme-client', clientSecret: 'acme-secret', profile: { id: 'acme-1', username: 'acme one', email: 'acme1@example.com', email_verified: true } })
})
afterAll(() => acme.close())

let options: ModuleOptions
const served = serveModuleForFile(() => options = resolveOptions({
  token: { secret: SECRET },
  tokenRefresh: { storage: { driver: 'memory' } },
  logging: { level: 'silent' },
  redirect: { success: '/home', error: '/login' },
  providers: {
    mock: { enableInProduction: true, mockUsers: ['alice', 'bob', 'carol', 'dave', 'erin', 'fay', 'gil', 'hal', 'ivy', 'jo', 'kim', 'lu', 'mo', 'ned'].map(name => ({ sub: name, email: `${name}@example.com`, name })) },
    custom: { acme: { clientId: 'acme-client', clientSecret: 'acme-secret', authorizationUrl: `${acme.base}${DISCORD_PATHS.authorize}`, tokenUrl: `${acme.base}${DISCORD_PATHS.token}`, userInfoUrl: `${acme.base}${DISCORD_PATHS.userinfo}`, profileMapping: { sub: 'id' } } },
    password: {},
    passkey: {},
    magicLink: {},
  },
  identities: { linkByEmail: true },
}, false))

const host = memoryIdentities()
const accounts = memoryPasswordAccounts()
const passkeys: PasskeyCredential[] = []
/** How long the host's deleteCredential takes (ms): a slow database lets an unlink run meanwhile. */
let slowDelete = 0
const persisted: Array<{ user: AuthUser, provider: string }> = []
beforeAll(() => {
  defineAuthHandlers({
    identities: host.handlers,
    password: accounts.handlers,
    passkey: {
      listCredentials: userId => passkeys.filter(c => c.userId === userId),
      findCredential: () => null,
      saveCredential: () => {},
      deleteCredential: async (id, userId) => {
        await new Promise(resolve => setTimeout(resolve, slowDelete))
        passkeys.splice(0, passkeys.length, ...passkeys.filter(c => !(c.id === id && c.userId === userId)))
      },
    },
    onUserPersist: (user, { provider }) => void persisted.push({ user: { ...user }, provider }),
  })
})
beforeEach(() => {
  acme.reset()
  clearProviderCaches()
  nitro.hooks.length = 0
  const ctx = peekAuthContext()
  if (ctx) {
    ctx.options.identities!.linkByEmail = true
    ctx.lifetimes.recentLogin = 900
  }
})

/** A browser: its cookie jar, following nothing by itself. */
const browser = () => jarBrowser(() => served.base)
type Browser = ReturnType<typeof browser>

/** Follows redirects on this app (and the fake provider) until one leaves for a page outside them: that page's URL. */
async function follow(b: Browser, first: Response, stopAt = (url: URL) => !url.pathname.startsWith('/auth/') && !url.pathname.startsWith('/mock/') && url.origin !== acme.base): Promise<URL> {
  let res = first
  for (let hop = 0; hop < 6 && res.status === 302; hop++) {
    const url = new URL(res.headers.get('location')!, served.base)
    if (stopAt(url) || url.pathname === options.endpoints.callbackPath) return url
    res = await b.get(url.href)
  }
  throw new Error(`no redirect out of the login (status ${res.status})`)
}

/** A login with `provider` (`?user=` picks the mock user): the browser, its access token and its `sub`. */
async function logIn(provider: 'mock' | 'acme', user?: string, b = browser()): Promise<{ b: Browser, token: string, sub: string }> {
  const callback = await follow(b, await b.get(`/auth/${provider}${user ? `?user=${user}` : ''}`))
  const code = callback.searchParams.get('code')
  expect(code, callback.href).toBeTruthy()
  const res = await fetch(`${served.base}${options.endpoints.tokenPath}`, { method: 'POST', headers: { 'content-type': 'application/json', 'cookie': b.jar.header() }, body: JSON.stringify({ code }) })
  expect(res.status).toBe(200)
  b.jar.store(res)
  const { accessToken } = await res.json() as { accessToken: string }
  return { b, token: accessToken, sub: JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()).sub }
}

/** A bearer call of the links routes from the browser `b` (same-origin unless `origin` says otherwise). */
function call(session: { b: Browser, token: string }, method: string, path: string, body?: unknown, origin = served.base): Promise<Response> {
  return fetch(`${served.base}/auth/${path}`, {
    method,
    headers: { authorization: `Bearer ${session.token}`, cookie: session.b.jar.header(), origin: origin, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  })
}

/** POST link/<provider>: the provider's URL, with the browser's login cookies kept. */
async function startLink(session: { b: Browser, token: string }, provider: string, body: Record<string, unknown> = { redirect: '/settings' }): Promise<string> {
  const res = await call(session, 'POST', `link/${provider}`, body)
  const answer = await res.json() as { redirect: string, error?: string }
  expect(res.status, JSON.stringify(answer)).toBe(200)
  session.b.jar.store(res)
  return answer.redirect
}

/** A whole link: POST link/<provider>, the provider, back to the page. The page's URL. */
async function link(session: { b: Browser, token: string }, provider: string, body?: Record<string, unknown>): Promise<URL> {
  return follow(session.b, await session.b.get(await startLink(session, provider, body)))
}

async function errorOf(res: Response, status: number): Promise<string> {
  const body = await res.json() as { error: string }
  expect(res.status, JSON.stringify(body)).toBe(status)
  return body.error
}

const linksOf = async (session: { b: Browser, token: string }) => (await (await call(session, 'GET', 'links')).json()) as { links: Array<{ provider: string, email?: string }>, password: boolean, magicLink: boolean, passkeys: number }
const rowsOf = (userId: string) => [...host.rows.values()].filter(row => row.userId === userId).map(row => `${row.provider}:${row.subject}`).sort()

describe('a provider login with the identity handlers', () => {
  it('links a new account\'s identity at its first login, and logs in as the linked user afterwards', async () => {
    const alice = await logIn('mock', 'alice')
    expect(alice.sub).toBe('mock:alice')
    expect(rowsOf('mock:alice')).toEqual(['mock:alice'])
    expect(nitro.hooks.filter(([name]) => name === 'svc:identity:linked').map(([, p]) => (p as { via: string }).via)).toEqual(['login'])
    expect((await logIn('mock', 'alice')).sub).toBe('mock:alice')
    expect(host.calls.link).toBe(1)
  })
})

describe('linking a provider to the signed-in account', () => {
  it('links the provider end to end, and its login then logs into the same account', async () => {
    const dave = await logIn('mock', 'dave')
    acme.change.profile = { id: 'acme-dave', email: 'dave-at-acme@example.com' }
    const back = await link(dave, 'acme')
    expect(`${back.pathname}${back.search}`).toBe('/settings?linked=acme')
    expect(rowsOf('mock:dave')).toEqual(['acme:acme-dave', 'mock:dave'])
    expect(nitro.hooks.some(([name, p]) => name === 'svc:identity:linked' && (p as { via: string, identity: { userId: string } }).via === 'link' && (p as { identity: { userId: string } }).identity.userId === 'mock:dave')).toBe(true)
    expect((await linksOf(dave)).links.map(l => l.provider).sort()).toEqual(['acme', 'mock'])
    // A login with the linked provider is Dave's, whatever the provider's email; onUserPersist sees his subject.
    persisted.length = 0
    expect((await logIn('acme')).sub).toBe('mock:dave')
    expect(persisted.at(-1)).toMatchObject({ provider: 'acme', user: { sub: 'mock:dave' } })
  })

  it('refuses a provider identity linked to another user (identity_taken), and another of a provider already linked', async () => {
    const alice = await logIn('mock', 'alice')
    const bob = await logIn('mock', 'bob')
    acme.change.profile = { id: 'acme-taken' }
    expect((await link(alice, 'acme')).search).toBe('?linked=acme')
    acme.change.profile = { id: 'acme-taken' }
    const refused = await link(bob, 'acme')
    expect(`${refused.pathname}${refused.search}`).toBe('/settings?error=identity_taken')
    expect(await host.handlers.findUserByIdentity('acme', 'acme-taken')).toBe('mock:alice')
    acme.change.profile = { id: 'acme-second' }
    expect((await link(alice, 'acme')).search).toBe('?error=provider_already_linked')
    expect(rowsOf('mock:alice')).toEqual(['acme:acme-taken', 'mock:alice'])
  })

  it('returns to `redirect.success` without a redirect, and refuses one that leaves the site (400)', async () => {
    const carol = await logIn('mock', 'carol')
    acme.change.profile = { id: 'acme-carol' }
    expect((await link(carol, 'acme', {})).pathname).toBe('/home')
    for (const redirect of ['https://evil.example/', '//evil.example', '/\\evil.example', '/a/..//evil.example', '/%2e%2e//evil.example']) {
      expect(await errorOf(await call(carol, 'POST', 'link/acme', { redirect }), 400)).toBe('bad_request')
    }
  })

  it('refuses a cross-site request, an impersonated session, an old login, no token and an unknown provider', async () => {
    const alice = await logIn('mock', 'alice')
    expect(await errorOf(await call(alice, 'POST', 'link/acme', {}, 'https://evil.example'), 403)).toBe('cross_origin_request')
    expect(await errorOf(await call(alice, 'DELETE', 'links/acme', undefined, 'https://evil.example'), 403)).toBe('cross_origin_request')
    const auth = await createTestAuth({ config: options, env: {} })
    const impersonated = await auth.mintImpersonated({ sub: 'mock:alice' }, { sub: 'admin' })
    for (const [method, path] of [['POST', 'link/acme'], ['GET', 'links'], ['DELETE', 'links/mock']]) {
      expect(await errorOf(await call({ b: alice.b, token: impersonated.token }, method!, path!, method === 'POST' ? {} : undefined), 403)).toBe('impersonated_session')
    }
    peekAuthContext()!.lifetimes.recentLogin = 0.001
    await new Promise(resolve => setTimeout(resolve, 20))
    expect(await errorOf(await call(alice, 'POST', 'link/acme', {}), 403)).toBe('reauthentication_required')
    expect(await errorOf(await call(alice, 'DELETE', 'links/mock'), 403)).toBe('reauthentication_required')
    peekAuthContext()!.lifetimes.recentLogin = 900
    expect(await errorOf(await call({ b: alice.b, token: '' }, 'POST', 'link/acme', {}), 401)).toBe('unauthorized')
    for (const name of ['password', 'nope', 'a%2Fb']) expect(await errorOf(await call(alice, 'POST', `link/${name}`, {}), 404)).toBe('not_found')
    // Names of object keys and routes, malformed escapes, oversized: never a 500, never another route.
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'links', '%ZZ', '%00', 'x'.repeat(65)]) {
      for (const [method, path] of [['POST', `link/${name}`], ['DELETE', `links/${name}`]] as const) {
        const res = await call(alice, method, path, method === 'POST' ? {} : undefined)
        expect([400, 404], `${method} ${path}: ${res.status}`).toContain(res.status)
        expect(await res.json()).toMatchObject({ statusCode: res.status, error: expect.stringMatching(/^(not_found|bad_request)$/) })
      }
    }
    expect(rowsOf('mock:alice')).toContain('mock:alice')
  })
})

describe('a stolen or replayed link', () => {
  it('is single use: the callback replayed after the link links nothing more', async () => {
    const alice = await logIn('mock', 'alice')
    host.rows.delete('acme\0acme-replay')
    acme.change.profile = { id: 'acme-replay-1' }
    const atProvider = await alice.b.get(await startLink(alice, 'acme'))
    const callback = atProvider.headers.get('location')!
    expect((await follow(alice.b, await alice.b.get(callback))).search).toMatch(/^\?(linked=acme|error=provider_already_linked)$/)
    const before = host.calls.link
    const replay = await follow(alice.b, await alice.b.get(callback))
    expect(replay.searchParams.get('error')).toBe('invalid_state')
    expect(host.calls.link).toBe(before)
  })

  it('a callback taken to another browser (the attacker\'s) links nothing, in neither account', async () => {
    const victim = await logIn('mock', 'bob')
    const attacker = await logIn('mock', 'carol')
    acme.change.profile = { id: 'acme-stolen' }
    const atProvider = await victim.b.get(await startLink(victim, 'acme'))
    const stolen = await follow(attacker.b, await attacker.b.get(atProvider.headers.get('location')!))
    expect(stolen.searchParams.get('error')).toBe('invalid_state')
    expect(await host.handlers.findUserByIdentity('acme', 'acme-stolen')).toBeNull()
  })

  it('a link\'s state and login cookies without the browser\'s binding cookie (planted elsewhere) link nothing', async () => {
    const victim = await logIn('mock', 'erin')
    const attacker = browser()
    acme.change.profile = { id: 'acme-planted' }
    const url = await startLink(victim, 'acme')
    // The attacker's browser gets every login cookie of the victim's link but the code binding cookie.
    for (const [name, value] of victim.b.jar) if (!name.endsWith(options.authCode.cookieName) && !name.includes(options.tokenRefresh.cookie.cookieName)) attacker.jar.set(name, value)
    expect([...attacker.jar.keys()].length).toBeGreaterThan(0)
    const back = await follow(attacker, await attacker.get(url))
    expect(back.searchParams.get('error')).toBe('invalid_state')
    expect(await host.handlers.findUserByIdentity('acme', 'acme-planted')).toBeNull()
  })

  it('the attacker\'s own started link, completed in the victim\'s browser, links nothing into the victim\'s account', async () => {
    const victim = await logIn('mock', 'alice')
    const attacker = await logIn('mock', 'bob')
    acme.change.profile = { id: 'acme-attacker' }
    const atProvider = await attacker.b.get(await startLink(attacker, 'acme'))
    const back = await follow(victim.b, await victim.b.get(atProvider.headers.get('location')!))
    expect(back.searchParams.get('error')).toBe('invalid_state')
    expect(await host.handlers.findUserByIdentity('acme', 'acme-attacker')).toBeNull()
    expect(rowsOf('mock:alice')).not.toContain('acme:acme-attacker')
  })

  it('a link whose store fails (linkIdentity throws) returns an error, links nothing and cannot be replayed', async () => {
    const alice = await logIn('mock', 'alice')
    host.rows.forEach((row, key) => row.userId === 'mock:alice' && row.provider === 'acme' && host.rows.delete(key))
    acme.change.profile = { id: 'acme-crash' }
    defineAuthHandlers({ identities: { linkIdentity: async () => {
      throw new Error('database down')
    } } })
    try {
      const atProvider = await alice.b.get(await startLink(alice, 'acme'))
      const callback = atProvider.headers.get('location')!
      expect((await follow(alice.b, await alice.b.get(callback))).search).toBe('?error=server_error')
      defineAuthHandlers({ identities: host.handlers })
      expect((await follow(alice.b, await alice.b.get(callback))).searchParams.get('error')).toBe('invalid_state')
      expect(await host.handlers.findUserByIdentity('acme', 'acme-crash')).toBeNull()
    }
    finally {
      defineAuthHandlers({ identities: host.handlers })
    }
  })

  it('a link whose session ended meanwhile (logout) links nothing', async () => {
    const carol = await logIn('mock', 'carol')
    acme.change.profile = { id: 'acme-after-logout' }
    const url = await startLink(carol, 'acme')
    const logout = await fetch(`${served.base}${options.endpoints.logoutPath}`, { method: 'POST', headers: { cookie: carol.b.jar.header(), origin: served.base } })
    expect(logout.status).toBe(200)
    expect((await follow(carol.b, await carol.b.get(url))).search).toBe('?error=session_revoked')
    expect(await host.handlers.findUserByIdentity('acme', 'acme-after-logout')).toBeNull()
  })
})

/** A mock login linked by email to the password account `acct-<name>`: an account whose subject no identity names. */
async function accountLogin(name: string): Promise<{ b: Browser, token: string, sub: string }> {
  accounts.users.set(`${name}@example.com`, { id: `acct-${name}`, email: `${name}@example.com`, hashedPassword: '$2b$12$hash', emailVerified: true })
  const session = await logIn('mock', name)
  expect(session.sub).toBe(`acct-${name}`)
  return session
}

describe('listing and unlinking', () => {
  it('never unlinks the last way to log in; unlinks otherwise; counts a password', async () => {
    const hal = await accountLogin('hal')
    accounts.users.delete('hal@example.com')
    expect(await linksOf(hal)).toEqual({ links: [{ provider: 'mock', email: 'hal@example.com', linkedAt: expect.any(String) }], password: false, magicLink: false, passkeys: 0 })
    expect(await errorOf(await call(hal, 'DELETE', 'links/mock'), 409)).toBe('last_login_method')
    expect(rowsOf('acct-hal')).toEqual(['mock:hal'])
    acme.change.profile = { id: 'acme-hal' }
    expect((await link(hal, 'acme')).search).toBe('?linked=acme')
    expect(await errorOf(await call(hal, 'DELETE', 'links/github'), 404)).toBe('not_found')
    expect((await call(hal, 'DELETE', 'links/mock')).status).toBe(200)
    expect(rowsOf('acct-hal')).toEqual(['acme:acme-hal'])
    expect(nitro.hooks.some(([name, p]) => name === 'svc:identity:unlinked' && (p as { identity: { provider: string } }).identity.provider === 'mock')).toBe(true)
    expect(await errorOf(await call(hal, 'DELETE', 'links/acme'), 409)).toBe('last_login_method')
    // A password of this very account is another way in: the last identity may go.
    accounts.users.set('hal@example.com', { id: 'acct-hal', email: 'hal@example.com', hashedPassword: '$2b$12$hash' })
    expect((await linksOf(hal)).password).toBe(true)
    expect((await call(hal, 'DELETE', 'links/acme')).status).toBe(200)
    expect(rowsOf('acct-hal')).toEqual([])
  })

  it('never unlinks the identity an account was made with (its subject): its login would open the account all the same', async () => {
    const lu = await logIn('mock', 'lu')
    acme.change.profile = { id: 'acme-lu' }
    expect((await link(lu, 'acme')).search).toBe('?linked=acme')
    expect(await errorOf(await call(lu, 'DELETE', 'links/mock'), 409)).toBe('founding_identity')
    expect(rowsOf('mock:lu')).toEqual(['acme:acme-lu', 'mock:lu'])
    // The other identity goes: the account keeps its own.
    expect((await call(lu, 'DELETE', 'links/acme')).status).toBe(200)
    expect(rowsOf('mock:lu')).toEqual(['mock:lu'])
  })

  it('counts a magic link to the account as a way in (its email\'s account is this user\'s, with or without a password)', async () => {
    const ivy = await accountLogin('ivy')
    accounts.users.delete('ivy@example.com')
    expect(await linksOf(ivy)).toMatchObject({ password: false, magicLink: false })
    expect(await errorOf(await call(ivy, 'DELETE', 'links/mock'), 409)).toBe('last_login_method')
    accounts.users.set('ivy@example.com', { id: 'acct-ivy', email: 'ivy@example.com' } as PasswordUser)
    expect(await linksOf(ivy)).toMatchObject({ password: false, magicLink: true })
    expect((await call(ivy, 'DELETE', 'links/mock')).status).toBe(200)
  })

  it('counts the account\'s passkeys as a way in', async () => {
    const jo = await accountLogin('jo')
    accounts.users.delete('jo@example.com')
    expect(await errorOf(await call(jo, 'DELETE', 'links/mock'), 409)).toBe('last_login_method')
    passkeys.push({ id: 'jo-key', userId: 'acct-jo', publicKey: 'pk', counter: 0, createdAt: new Date().toISOString() } as PasskeyCredential)
    expect(await linksOf(jo)).toMatchObject({ password: false, passkeys: 1 })
    expect((await call(jo, 'DELETE', 'links/mock')).status).toBe(200)
    expect(rowsOf('acct-jo')).toEqual([])
  })

  it('never deletes the passkey that is the last way in, neither after an unlink nor at the same moment as one', async () => {
    const key = (id: string, userId: string) => ({ id, userId, publicKey: 'pk', counter: 0, createdAt: new Date().toISOString() }) as PasskeyCredential
    const mo = await accountLogin('mo')
    accounts.users.delete('mo@example.com')
    passkeys.push(key('mo-key', 'acct-mo'))
    expect((await call(mo, 'DELETE', 'links/mock')).status).toBe(200)
    expect(await errorOf(await call(mo, 'DELETE', 'passkey/credentials/mo-key'), 409)).toBe('last_login_method')
    expect(passkeys.some(c => c.id === 'mo-key')).toBe(true)
    // One identity and one passkey, both removed at once: one of them stays.
    const ned = await accountLogin('ned')
    accounts.users.delete('ned@example.com')
    passkeys.push(key('ned-key', 'acct-ned'))
    slowDelete = 100
    const answers = await Promise.all([call(ned, 'DELETE', 'passkey/credentials/ned-key'), call(ned, 'DELETE', 'links/mock')]).finally(() => slowDelete = 0)
    expect(answers.map(res => res.status).sort()).toEqual([200, 409])
    expect(rowsOf('acct-ned').length + passkeys.filter(c => c.userId === 'acct-ned').length).toBe(1)
  })

  it('does not count the password account of the same email that is another user\'s', async () => {
    const kim = await accountLogin('kim')
    accounts.users.set('kim@example.com', { id: 'someone-else', email: 'kim@example.com', hashedPassword: '$2b$12$hash' })
    expect(await linksOf(kim)).toMatchObject({ password: false, magicLink: false })
    expect(await errorOf(await call(kim, 'DELETE', 'links/mock'), 409)).toBe('last_login_method')
  })
})

describe('automatic linking by email (identities.linkByEmail)', () => {
  const victimEmail = 'victim@example.com'
  beforeEach(() => {
    accounts.users.set(victimEmail, { id: 'victim', email: victimEmail, hashedPassword: '$2b$12$hash', emailVerified: true })
    for (const [key, row] of host.rows) if (row.provider === 'acme' && row.subject.startsWith('acme-email')) host.rows.delete(key)
  })

  it('an attacker\'s provider account with the victim\'s email, unverified, neither logs in as the victim nor links to them', async () => {
    acme.change.profile = { id: 'acme-email-unverified', email: victimEmail, email_verified: false }
    const attacker = await logIn('acme')
    expect(attacker.sub).toBe('acme:acme-email-unverified')
    expect(await host.handlers.findUserByIdentity('acme', 'acme-email-unverified')).toBe('acme:acme-email-unverified')
    expect(rowsOf('victim')).toEqual([])
  })

  it('links a verified email to the account whose email was proven, and logs in as it', async () => {
    acme.change.profile = { id: 'acme-email-verified', email: victimEmail, email_verified: true }
    expect((await logIn('acme')).sub).toBe('victim')
    expect(rowsOf('victim')).toEqual(['acme:acme-email-verified'])
    expect(nitro.hooks.some(([name, p]) => name === 'svc:identity:linked' && (p as { via: string }).via === 'email')).toBe(true)
    expect((await logIn('acme')).sub).toBe('victim')
  })

  it('does not link when the account\'s email is not marked verified', async () => {
    accounts.users.set(victimEmail, { id: 'victim', email: victimEmail, hashedPassword: '$2b$12$hash' })
    acme.change.profile = { id: 'acme-email-account-unverified', email: victimEmail, email_verified: true }
    expect((await logIn('acme')).sub).toBe('acme:acme-email-account-unverified')
    expect(rowsOf('victim')).toEqual([])
  })

  it('reads a provider\'s `email_verified` given as a string, and links only the account of that very address', async () => {
    for (const [id, email, verified, owner] of [
      ['acme-email-string-false', victimEmail, 'false', undefined],
      ['acme-email-other', 'victim+other@example.com', true, undefined],
      ['acme-email-lookalike', 'victim@examp1e.com', true, undefined],
      ['acme-email-string-true', ' Victim@EXAMPLE.com ', 'true', 'victim'],
    ] as const) {
      acme.change.profile = { id, email, email_verified: verified }
      expect((await logIn('acme')).sub, id).toBe(owner ?? `acme:${id}`)
    }
    expect(rowsOf('victim')).toEqual(['acme:acme-email-string-true'])
  })

  it('does not link when linkByEmail is off, even with both sides verified', async () => {
    peekAuthContext()!.options.identities!.linkByEmail = false
    acme.change.profile = { id: 'acme-email-off', email: victimEmail, email_verified: true }
    expect((await logIn('acme')).sub).toBe('acme:acme-email-off')
    expect(rowsOf('victim')).toEqual([])
  })
})
