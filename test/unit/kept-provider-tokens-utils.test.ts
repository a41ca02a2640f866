import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { resolveOptions } from '../../src/build/resolve-options'
import { authErrorCode } from '../../src/runtime/server/lib/edge/errors'
import { keepLoginTokens, readKeptTokens } from '../../src/runtime/oauth/server/token-vault'
import { nitro } from './helpers/nitro-stub'
import { fakeEvent } from './helpers/event'

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
