import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest'
import { resolveOptions } from '../../src/build/resolve-options'
import { createAuthContext, type AuthContext, type AuthFeature, type SecurityEventDraft } from '../../src/runtime/server/lib/core/context'
import { createStoreBackend, type StoreBackend } from '../../src/runtime/server/lib/store'
import { authErrorCode } from '../../src/runtime/server/lib/edge/errors'
import { issueRefreshToken, revokeRefreshToken } from '../../src/runtime/server/lib/core/records/refresh-token'
import { revokeSessions } from '../../src/runtime/server/lib/core/session-list'
import { clearProviderCaches } from '../../src/runtime/oauth/server/provider-http'
import { dropKeptTokens, keepLoginTokens, readKeptTokens, vaultKey, vaultKeys } from '../../src/runtime/oauth/server/token-vault'
import { providerAccessToken } from '../../src/runtime/oauth/server/upstream-refresh'
import type { ModuleOptionsInput } from '../../src/runtime/types/options'
import { features } from './helpers/features'
import { DISCORD_PATHS, startFakeProvider, type FakeProvider } from './helpers/fake-provider'
import { startOAuthApp } from './helpers/oauth-app'
import { fakeEvent } from './helpers/event'
import { completeLogin } from '../../src/runtime/server/lib/core/login'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { storePlace, type StorePlace } from './helpers/record-stores'
import { raceProcesses } from './helpers/race-processes'

// Provider tokens kept server-side (`keepTokens`): sealed per user and provider, refreshed upstream once.
let fake: FakeProvider
let rotating: FakeProvider
const SECRET = 'vault-test-secret-0123456789-abcdefghijklmn'

beforeAll(async () => {
  fake = await startFakeProvider({ paths: DISCORD_PATHS, clientId: 'acme-client', clientSecret: 'acme-secret', profile: { id: 'u-1', username: 'una', email: 'una@example.com', verified: true }, refresh: { rotate: false } })
  rotating = await startFakeProvider({ paths: DISCORD_PATHS, clientId: 'rot-client', clientSecret: 'rot-secret', profile: { id: 'u-2', username: 'rot' }, refresh: { rotate: true } })
})
afterAll(async () => {
  await fake.close()
  await rotating.close()
})
beforeEach(() => {
  fake.reset()
  rotating.reset()
  clearProviderCaches()
})

const endpoints = (p: FakeProvider) => ({ authorizationUrl: `${p.base}${DISCORD_PATHS.authorize}`, tokenUrl: `${p.base}${DISCORD_PATHS.token}`, userInfoUrl: `${p.base}${DISCORD_PATHS.userinfo}` })

/** What a context of these tests saw: hooks called and security events recorded. */
interface Seen {
  hooks: Array<{ name: string, payload: unknown }>
  events: SecurityEventDraft[]
}

const opened: Array<{ ctx: AuthContext }> = []
afterAll(() => Promise.all(opened.splice(0).map(({ ctx }) => ctx.dispose())))

/** The custom providers of these tests: `acme` and `rot` keep tokens until the last session ends, `offline` after it, `plain` not at all. */
const customProviders = () => ({
  acme: { clientId: 'acme-client', clientSecret: 'acme-secret', ...endpoints(fake), profileMapping: { sub: 'id' }, keepTokens: true },
  rot: { clientId: 'rot-client', clientSecret: 'rot-secret', ...endpoints(rotating), profileMapping: { sub: 'id' }, keepTokens: true },
  offline: { clientId: 'acme-client', clientSecret: 'acme-secret', ...endpoints(fake), profileMapping: { sub: 'id' }, keepTokens: 'offline' as const },
  plain: { clientId: 'acme-client', clientSecret: 'acme-secret', ...endpoints(fake), profileMapping: { sub: 'id' } },
})

/** A context whose providers `acme` (keepTokens: true), `rot` (rotating refresh tokens) and `offline` keep tokens. */
async function vaultContext(storage: Record<string, unknown> = { driver: 'memory' }, more: ModuleOptionsInput = {}, backend?: StoreBackend): Promise<AuthContext & { seen: Seen }> {
  const seen: Seen = { hooks: [], events: [] }
  const options = resolveOptions({
    token: { secret: SECRET },
    tokenRefresh: { storage },
    logging: { level: 'silent' },
    providers: { custom: customProviders() },
    ...more,
  }, true)
  const capture: AuthFeature = { name: 'capture', recordEvent: async (_ctx, draft) => void seen.events.push(draft) }
  const ctx = await createAuthContext(options, {
    backend: backend ?? await createStoreBackend(options.tokenRefresh.storage),
    features: [...features, capture],
    callHook: async (name, payload) => void seen.hooks.push({ name, payload }),
  })
  opened.push({ ctx })
  return Object.assign(ctx, { seen })
}

const codeOf = (promise: Promise<unknown>) => promise.then(() => 'resolved', (error: unknown) => authErrorCode(error) ?? String(error))

/** Tokens as a login at the fake provider would give them, with a refresh token it accepts. */
const loginTokens = (p: FakeProvider, expiresIn = 300) => ({ access_token: `at-${Math.random().toString(36).slice(2)}`, refresh_token: p.issueRefreshToken(), expires_in: expiresIn, scope: 'identify' })

describe('a login through the provider', () => {
  it('keeps its tokens sealed, under HMAC keys, and getProviderToken answers the access token', async () => {
    const ctx = await vaultContext()
    const app = await startOAuthApp(ctx, () => ({}))
    try {
      const start = await fetch(`${app.base}/auth/acme`, { redirect: 'manual' })
      const atProvider = await fetch(start.headers.get('location')!, { redirect: 'manual' })
      const cookie = start.headers.getSetCookie().map(l => l.split(';')[0]).join('; ')
      const done = await fetch(atProvider.headers.get('location')!, { redirect: 'manual', headers: { cookie } })
      expect(new URL(done.headers.get('location')!, app.base).pathname).toBe('/auth/callback')
    }
    finally {
      await app.close()
    }
    const kept = await readKeptTokens(ctx, 'acme:u-1', 'acme')
    expect(kept?.accessToken).toMatch(/^[0-9a-f]{32}$/)
    expect(kept?.refreshToken).toMatch(/^[0-9a-f]{32}$/)
    expect(kept?.scope).toBeTypeOf('string')
    expect(fake.accepts(kept!.accessToken)).toBe(true)
    expect(await providerAccessToken(ctx, 'acme:u-1', 'acme')).toBe(kept!.accessToken)
    expect(fake.refreshes.count).toBe(0)

    const backend = (ctx as AuthContext).backend
    const raw = await Promise.all((await backend.keys('')).map(async key => `${key} ${await backend.get(key)}`))
    const dump = raw.join('\n')
    expect(raw.some(line => line.includes('provider-tokens:'))).toBe(true)
    for (const secret of [kept!.accessToken, kept!.refreshToken!]) expect(dump).not.toContain(secret)
    const vaultLine = raw.find(line => line.includes('provider-tokens:'))!
    for (const name of ['u-1', 'acme', 'identify']) expect(vaultLine.slice(vaultLine.indexOf(':'))).not.toContain(name)
  })

  it('keeps nothing for a provider without keepTokens, and getProviderToken refuses it as a set-up mistake', async () => {
    const ctx = await vaultContext()
    await keepLoginTokens(ctx, 'plain:u', 'plain', loginTokens(fake))
    expect(await readKeptTokens(ctx, 'plain:u', 'plain')).toBeNull()
    await expect(providerAccessToken(ctx, 'plain:u', 'plain')).rejects.toThrow(/does not keep tokens/)
  })

  it('replaces the kept tokens, keeping the refresh token when the provider sent none', async () => {
    const ctx = await vaultContext()
    const first = loginTokens(fake)
    await keepLoginTokens(ctx, 'acme:u', 'acme', first)
    await keepLoginTokens(ctx, 'acme:u', 'acme', { access_token: 'second', expires_in: 300 })
    expect(await readKeptTokens(ctx, 'acme:u', 'acme')).toMatchObject({ accessToken: 'second', refreshToken: first.refresh_token })
    await keepLoginTokens(ctx, 'acme:u', 'acme', { access_token: 'third', refresh_token: 'new-refresh' })
    const third = await readKeptTokens(ctx, 'acme:u', 'acme')
    expect(third).toMatchObject({ accessToken: 'third', refreshToken: 'new-refresh' })
    expect(third?.expiresAt).toBeUndefined()
  })
})

describe('a login with a second factor', () => {
  it('keeps nothing while the second factor is pending; a login that finishes keeps its tokens', async () => {
    const ctx = await vaultContext(undefined, { twoFactor: { enabled: true, requireForAll: true } })
    defineAuthHandlers({ twoFactor: { find: async () => null, save: async () => {} } })
    onTestFinished(() => resetAuthHandlers())
    const login = (secondFactor?: 'passkey') => completeLogin(ctx, { event: fakeEvent({ url: '/auth/acme' }), provider: 'acme', user: { sub: 'u-2fa' }, tokens: { access_token: `at-${secondFactor}` }, secondFactor })
    expect((await login()).secondFactor).toBeDefined()
    expect(await readKeptTokens(ctx, 'acme:u-2fa', 'acme')).toBeNull()
    expect((await login('passkey')).code).toBeDefined()
    expect((await readKeptTokens(ctx, 'acme:u-2fa', 'acme'))?.accessToken).toBe('at-passkey')
  })
})

describe('sealing', () => {
  it('opens after a rotation of token.secret (previousSecrets) or of the encryption key (previousKeys); not with other keys', async () => {
    const place = await storePlace('fs')
    try {
      const storage = { driver: 'fs' as const, base: place.base }
      const before = await vaultContext(storage)
      await keepLoginTokens(before, 'acme:u', 'acme', { access_token: 'sealed-at', refresh_token: 'sealed-rt' })
      const rotated = await vaultContext(storage, { token: { secret: 'vault-test-rotated-0123456789-abcdefghijklmn', previousSecrets: [SECRET] } })
      expect((await readKeptTokens(rotated, 'acme:u', 'acme'))?.accessToken).toBe('sealed-at')
      // With encryption at rest: its key, rotated with its previous keys.
      const k1 = 'vault-test-encryption-key-1-0123456789-abcdef'
      const k2 = 'vault-test-encryption-key-2-0123456789-abcdef'
      const encrypted = await vaultContext(storage, { tokenRefresh: { storage, encryption: { enabled: true, key: k1 } } })
      await keepLoginTokens(encrypted, 'acme:v', 'acme', { access_token: 'encrypted-at' })
      const reencrypted = await vaultContext(storage, { tokenRefresh: { storage, encryption: { enabled: true, key: k2, previousKeys: [k1] } } })
      expect((await readKeptTokens(reencrypted, 'acme:v', 'acme'))?.accessToken).toBe('encrypted-at')
      expect(vaultKeys(reencrypted.options)).toEqual([k2, k1, SECRET])
      const stranger = await vaultContext(storage, { token: { secret: 'vault-test-stranger-0123456789-abcdefghijklmn', previousSecrets: [] } })
      expect(await readKeptTokens(stranger, 'acme:u', 'acme')).toBeNull()
    }
    finally {
      await place.cleanup()
    }
  })

  it('never answers another user\'s tokens, even copied under the user\'s key', async () => {
    const ctx = await vaultContext()
    await keepLoginTokens(ctx, 'acme:alice', 'acme', { access_token: 'alice-token' })
    const raw = await ctx.backend.get(vaultKey(ctx, 'acme:alice', 'acme').current)
    await ctx.backend.set(vaultKey(ctx, 'acme:mallory', 'acme').current, raw!, 60_000)
    expect(await codeOf(providerAccessToken(ctx, 'acme:mallory', 'acme'))).toBe('provider_not_linked')
    expect(await codeOf(providerAccessToken(ctx, 'acme:bob', 'acme'))).toBe('provider_not_linked')
    // Nor another provider's.
    await ctx.backend.set(vaultKey(ctx, 'acme:alice', 'rot').current, raw!, 60_000)
    expect(await codeOf(providerAccessToken(ctx, 'acme:alice', 'rot'))).toBe('provider_not_linked')
  })
})

describe.each(['memory', 'fs', 'redis'] as const)('upstream refresh on %s', (driver) => {
  let place: StorePlace
  let storage: Record<string, unknown>
  beforeAll(async () => {
    place = await storePlace(driver)
    storage = { driver, base: place.base, url: place.url, prefix: place.prefix }
  })
  afterAll(() => place.cleanup())

  it('refreshes an access token that expires within the skew, once, then answers the new one', async () => {
    const ctx = await vaultContext(storage)
    const tokens = loginTokens(fake, 10)
    await keepLoginTokens(ctx, 'acme:exp', 'acme', tokens)
    const refreshed = await providerAccessToken(ctx, 'acme:exp', 'acme')
    expect(refreshed).not.toBe(tokens.access_token)
    expect(fake.accepts(refreshed)).toBe(true)
    expect(await providerAccessToken(ctx, 'acme:exp', 'acme')).toBe(refreshed)
    expect(fake.refreshes.count).toBe(1)
    expect(await readKeptTokens(ctx, 'acme:exp', 'acme')).toMatchObject({ accessToken: refreshed, refreshToken: tokens.refresh_token, scope: 'identify' })
  })

  it('makes one upstream refresh for 50 concurrent calls in a process, and across two instances on one store', async () => {
    const ctx = await vaultContext(storage)
    fake.change.refreshDelayMs = 50
    await keepLoginTokens(ctx, 'acme:race', 'acme', loginTokens(fake, 0))
    const answers = await Promise.all(Array.from({ length: 50 }, () => providerAccessToken(ctx, 'acme:race', 'acme')))
    expect(new Set(answers).size).toBe(1)
    expect(fake.refreshes.count).toBe(1)
    if (driver === 'memory') return
    // A second instance: its own connection (or handle) on the same storage.
    const other = await vaultContext(storage)
    await keepLoginTokens(ctx, 'acme:race2', 'acme', loginTokens(fake, 0))
    const both = await Promise.all(Array.from({ length: 50 }, (_, i) => providerAccessToken(i % 2 ? ctx : other, 'acme:race2', 'acme')))
    expect(new Set(both).size).toBe(1)
    expect(fake.refreshes.count).toBe(2)
  })

  it('stores the rotated refresh token: the next refresh uses it', async () => {
    const ctx = await vaultContext(storage)
    rotating.change.expiresIn = 0
    await keepLoginTokens(ctx, 'rot:u', 'rot', loginTokens(rotating, 0))
    const first = await providerAccessToken(ctx, 'rot:u', 'rot')
    const second = await providerAccessToken(ctx, 'rot:u', 'rot')
    expect(second).not.toBe(first)
    expect(rotating.refreshes.count).toBe(2)
    expect((await readKeptTokens(ctx, 'rot:u', 'rot'))?.broken).toBeUndefined()
  })

  it('marks the link broken on invalid_grant: one hook and security event, then 409 without asking the provider', async () => {
    const ctx = await vaultContext(storage)
    await keepLoginTokens(ctx, 'acme:gone', 'acme', { access_token: 'old', refresh_token: 'revoked-at-provider', expires_in: 0 })
    const codes = await Promise.all(Array.from({ length: 10 }, () => codeOf(providerAccessToken(ctx, 'acme:gone', 'acme'))))
    expect(new Set(codes)).toEqual(new Set(['provider_link_broken']))
    expect(ctx.seen.hooks.filter(h => h.name === 'svc:provider:linkBroken')).toEqual([{ name: 'svc:provider:linkBroken', payload: { userId: 'acme:gone', provider: 'acme' } }])
    expect(ctx.seen.events.filter(e => e.type === 'provider.link_broken')).toMatchObject([{ outcome: 'failure', subject: 'acme:gone', details: { provider: 'acme', reason: 'invalid_grant' } }])
    const asked = fake.seen.length
    expect(await codeOf(providerAccessToken(ctx, 'acme:gone', 'acme'))).toBe('provider_link_broken')
    expect(fake.seen.length).toBe(asked)
    // A new login links it again.
    await keepLoginTokens(ctx, 'acme:gone', 'acme', loginTokens(fake))
    expect(await codeOf(providerAccessToken(ctx, 'acme:gone', 'acme'))).toBe('resolved')
  })

  it('answers 502 for a provider failure and keeps the link: the next call refreshes', async () => {
    const ctx = await vaultContext(storage)
    await keepLoginTokens(ctx, 'acme:5xx', 'acme', loginTokens(fake, 0))
    fake.change.refreshFailure = { status: 503, body: { error: 'temporarily_unavailable' } }
    expect(await codeOf(providerAccessToken(ctx, 'acme:5xx', 'acme'))).toBe('provider_unavailable')
    fake.change.refreshFailure = { status: 500, body: 'not json' }
    expect(await codeOf(providerAccessToken(ctx, 'acme:5xx', 'acme'))).toBe('provider_unavailable')
    expect((await readKeptTokens(ctx, 'acme:5xx', 'acme'))?.broken).toBeUndefined()
    fake.change.refreshFailure = undefined
    expect(await codeOf(providerAccessToken(ctx, 'acme:5xx', 'acme'))).toBe('resolved')
    expect(ctx.seen.hooks.some(h => h.name === 'svc:provider:linkBroken')).toBe(false)
  })

  it('drops the tokens when the user\'s last session ends, not before; `offline` keeps them', async () => {
    const ctx = await vaultContext(storage)
    const user = { sub: 'acme:leaving' }
    await keepLoginTokens(ctx, user.sub, 'acme', { access_token: 'kept-online' })
    await keepLoginTokens(ctx, user.sub, 'offline', { access_token: 'kept-offline' })
    const one = await issueRefreshToken(ctx, { user, userId: user.sub, claims: {} })
    const two = await issueRefreshToken(ctx, { user, userId: user.sub, claims: {} })
    await revokeRefreshToken(ctx, one.token)
    expect(await providerAccessToken(ctx, user.sub, 'acme')).toBe('kept-online')
    await revokeRefreshToken(ctx, two.token)
    expect(await codeOf(providerAccessToken(ctx, user.sub, 'acme'))).toBe('provider_not_linked')
    expect(await providerAccessToken(ctx, user.sub, 'offline')).toBe('kept-offline')
    // Revoking every session (a password reset, an administrator) drops them too; dropping by hand drops `offline` ones.
    await keepLoginTokens(ctx, user.sub, 'acme', { access_token: 'again' })
    await issueRefreshToken(ctx, { user, userId: user.sub, claims: {} })
    expect(await revokeSessions(ctx, user.sub, 'host')).toBe(1)
    expect(await readKeptTokens(ctx, user.sub, 'acme')).toBeNull()
    await dropKeptTokens(ctx, user.sub, ['offline'])
    expect(await codeOf(providerAccessToken(ctx, user.sub, 'offline'))).toBe('provider_not_linked')
  })
})

describe('two processes sharing Redis', () => {
  it('make one upstream refresh for 2 × 25 concurrent calls, and answer the same token', async () => {
    const place = await storePlace('redis')
    try {
      const storage = { driver: 'redis' as const, url: place.url, prefix: place.prefix }
      const ctx = await vaultContext(storage)
      fake.change.refreshDelayMs = 100
      await keepLoginTokens(ctx, 'acme:procs', 'acme', loginTokens(fake, 0))
      const spec = JSON.stringify({ secret: SECRET, storage, providers: { custom: customProviders() }, userId: 'acme:procs', provider: 'acme', calls: 25 })
      const reports = await raceProcesses<{ answers: string[] }>('provider-token-race.mjs', [spec], 2)
      const answers = reports.flatMap(r => r.answers)
      expect(answers).toHaveLength(50)
      expect(new Set(answers)).toEqual(new Set([(await readKeptTokens(ctx, 'acme:procs', 'acme'))!.accessToken]))
      expect(fake.refreshes.count).toBe(1)
    }
    finally {
      await place.cleanup()
    }
  }, 60_000)
})
