import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { resolveOptions } from '../../src/build/resolve-options'
import { authErrorCode } from '../../src/runtime/server/lib/edge/errors'
import { keepLoginTokens, readKeptTokens } from '../../src/runtime/oauth/server/token-vault'
import { nitro } from './helpers/nitro-stub'
import { fakeEvent } from './helpers/event'
import { issueRefreshToken, revokeFamily } from '../../src/runtime/server/lib/core/records/refresh-token'
import { mintSessionToken } from '../../src/runtime/server/lib/core/session-tokens'

// The server utils getProviderToken and dropProviderTokens as the host calls them (the Nitro runtime stubbed).
vi.mock('nitropack/runtime', () => import('./helpers/nitro-stub'))

const { getProviderToken, dropProviderTokens } = await import('../../src/runtime/oauth/server/utils/provider-token')
const { useAuthContext } = await import('../../src/runtime/server/utils/auth-context')

beforeAll(() => {
  nitro.options = resolveOptions({
    token: { secret: 'vault-utils-secret-0123456789-abcdefghijklmn' },
    tokenRefresh: { storage: { driver: 'memory' } },
    logging: { level: 'silent' },
    providers: { google: { clientId: 'g', clientSecret: 's', keepTokens: true }, github: { clientId: 'h', clientSecret: 's', keepTokens: 'offline' } },
  }, true)
})
afterAll(async () => (await useAuthContext()).dispose())

const code = (promise: Promise<unknown>) => promise.then(() => 'resolved', (error: unknown) => authErrorCode(error) ?? String(error))
const bearer = (token: string) => fakeEvent({ url: '/api/drive', headers: { authorization: `Bearer ${token}` } })

describe('getProviderToken', () => {
  it('answers the caller\'s own kept token, never another user\'s; 401 without a bearer, 403 in an impersonated session', async () => {
    const ctx = await useAuthContext()
    await keepLoginTokens(ctx, 'google:alice', 'google', { access_token: 'alice-google' })
    await keepLoginTokens(ctx, 'google:bob', 'google', { access_token: 'bob-google' })
    const alice = await ctx.tokens.sign({ sub: 'google:alice' })
    expect(await getProviderToken(bearer(alice.token), 'google')).toBe('alice-google')
    expect(await getProviderToken({ userId: 'google:bob' }, 'google')).toBe('bob-google')
    expect(await code(getProviderToken(fakeEvent({ url: '/api/drive' }), 'google'))).toBe('unauthorized')
    expect(await code(getProviderToken(bearer('not-a-token'), 'google'))).toBe('unauthorized')
    const admin = await ctx.tokens.sign({ sub: 'google:bob', impersonation: { originalUserSub: 'google:admin', originalUserLookupId: 'admin' } })
    expect(await code(getProviderToken(bearer(admin.token), 'google'))).toBe('impersonated_session')
    const carol = await ctx.tokens.sign({ sub: 'google:carol' })
    expect(await code(getProviderToken(bearer(carol.token), 'google'))).toBe('provider_not_linked')
  })

  it('refuses the access token of an ended session (401 session_revoked), the user\'s other sessions keeping the link', async () => {
    const ctx = await useAuthContext()
    await keepLoginTokens(ctx, 'github:dave', 'github', { access_token: 'dave-github' })
    const kept = await issueRefreshToken(ctx, { user: { sub: 'github:dave' }, userId: 'github:dave', claims: {} })
    const ended = await issueRefreshToken(ctx, { user: { sub: 'github:dave' }, userId: 'github:dave', claims: {} })
    const { token } = await mintSessionToken(ctx, ended.record, {})
    expect(await getProviderToken(bearer(token), 'github')).toBe('dave-github')
    await revokeFamily(ctx, ended.record.family, 'github:dave', 'logout')
    expect(await code(getProviderToken(bearer(token), 'github'))).toBe('session_revoked')
    const { token: other } = await mintSessionToken(ctx, kept.record, {})
    expect(await getProviderToken(bearer(other), 'github')).toBe('dave-github')
  })

  it('a user id holding the record id\'s separator and a provider name reaches no other record', async () => {
    const ctx = await useAuthContext()
    await keepLoginTokens(ctx, 'erin', 'github', { access_token: 'erin-github' })
    // Provider names cannot hold the separator, so `google` + `github\0erin` is no `github` + `erin`.
    expect(await code(getProviderToken({ userId: 'github\0erin' }, 'google'))).toBe('provider_not_linked')
    expect(await code(getProviderToken({ userId: '\0erin' }, 'github'))).toBe('provider_not_linked')
    await keepLoginTokens(ctx, 'github\0erin', 'google', { access_token: 'other' })
    expect(await getProviderToken({ userId: 'erin' }, 'github')).toBe('erin-github')
  })

  it('dropProviderTokens drops one provider\'s or all of a user\'s', async () => {
    const ctx = await useAuthContext()
    await keepLoginTokens(ctx, 'u', 'google', { access_token: 'g' })
    await keepLoginTokens(ctx, 'u', 'github', { access_token: 'h' })
    await dropProviderTokens('u', 'github')
    expect(await readKeptTokens(ctx, 'u', 'github')).toBeNull()
    expect(await getProviderToken({ userId: 'u' }, 'google')).toBe('g')
    await dropProviderTokens('u')
    expect(await readKeptTokens(ctx, 'u', 'google')).toBeNull()
  })
})
