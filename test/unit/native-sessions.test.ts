import { randomUUID } from 'node:crypto'
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { resolveOptions } from '../../src/build/resolve-options'
import { createAuthContext, type AuthContext } from '../../src/runtime/server/lib/core/context'
import { redeemAuthCode, refreshSession, startSession } from '../../src/runtime/server/lib/core/grants'
import { createAuthCode } from '../../src/runtime/server/lib/core/records/auth-code'
import { readSessionRecord } from '../../src/runtime/server/lib/core/records/refresh-token'
import { authErrorCode } from '../../src/runtime/server/lib/edge/errors'
import { randomToken, s256 } from '../../src/runtime/server/lib/store/crypto'
import type { ModuleOptionsInput } from '../../src/runtime/types/options'
import { deleteRedisKeys } from '../support/redis-servers'
import { testRedisUrl } from '../support/test-redis'
import { fakeEvent } from './helpers/event'
import { features } from './helpers/features'

// The grants of native sessions (the refresh token in the body) on each store: the cookie's rotation,
// grace period and reuse detection, and the separation of the two channels.

const RUN = `svc-auth-test:${randomUUID()}:`
const dirs: string[] = []
const contexts: AuthContext[] = []
afterAll(async () => {
  await Promise.all(contexts.map(ctx => ctx.dispose()))
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  await deleteRedisKeys(RUN)
})
afterEach(() => {
  vi.useRealTimers()
})

type Driver = 'memory' | 'fs' | 'redis'
const storage = (driver: Driver, shared?: string) => {
  if (driver === 'redis') return { driver, url: testRedisUrl(), prefix: shared ?? `${RUN}${randomUUID()}:` }
  if (driver === 'memory') return { driver }
  const base = shared ?? join(tmpdir(), `svc-auth-native-${randomUUID()}`)
  dirs.push(base)
  return { driver, base }
}

async function context(driver: Driver, input: ModuleOptionsInput = {}, shared?: string): Promise<AuthContext> {
  const ctx = await createAuthContext(resolveOptions({ token: { secret: 'native-sessions-secret-0123456789-abcdefgh' }, logging: { level: 'silent' }, ...input, tokenRefresh: { storage: storage(driver, shared), reuseGracePeriod: 10, ...input.tokenRefresh } }, true), { features })
  contexts.push(ctx)
  return ctx
}

/** A native login's code and verifier, as the login flow stores it. */
async function nativeCode(ctx: AuthContext): Promise<{ code: string, verifier: string }> {
  const verifier = randomToken(32)
  const code = await createAuthCode(ctx, fakeEvent(), { user: { sub: 'u1', email: 'u1@example.com' }, claims: { plan: 'pro' }, provider: 'mock', codeChallenge: s256(verifier) })
  return { code, verifier }
}

/** A native session: its first refresh token. */
async function nativeSession(ctx: AuthContext): Promise<string> {
  const { code, verifier } = await nativeCode(ctx)
  const started = await startSession(ctx, fakeEvent(), await redeemAuthCode(ctx, fakeEvent(), code, { channel: 'native', codeVerifier: verifier }), 'native')
  return started.refreshToken!
}

/** The error code a grant refuses with. */
const refusal = (promise: Promise<unknown>) => promise.then(() => 'granted', (error: unknown) => authErrorCode(error))

const native = (ctx: AuthContext, token: string) => refreshSession(ctx, fakeEvent(), token, { channel: 'native' })

describe.each(['memory', 'fs', 'redis'] as const)('native sessions on %s', (driver) => {
  it('a code is redeemed only with its verifier, once', async () => {
    const ctx = await context(driver)
    const { code, verifier } = await nativeCode(ctx)
    expect(await refusal(redeemAuthCode(ctx, fakeEvent(), code, { channel: 'native', codeVerifier: randomToken(32) }))).toBe('code_binding_mismatch')
    expect(await refusal(redeemAuthCode(ctx, fakeEvent(), code, { channel: 'native', codeVerifier: verifier }))).toBe('invalid_code')
    const other = await nativeCode(ctx)
    expect(await refusal(redeemAuthCode(ctx, fakeEvent(), other.code, { channel: 'cookie' }))).toBe('code_binding_mismatch')
  })

  it('rotates: a successor, the same one within the grace period, reuse after it ends the session', async () => {
    const ctx = await context(driver)
    const first = await nativeSession(ctx)
    const next = await native(ctx, first)
    expect(next.refreshToken).toMatch(/^[\w-]{43}$/)
    expect(next.record.channel).toBe('native')
    expect(next.token.split('.')).toHaveLength(3)
    expect((await native(ctx, first)).refreshToken).toBe(next.refreshToken)
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() + 11_000)
    expect(await refusal(native(ctx, first))).toBe('refresh_token_reused')
    expect(await refusal(native(ctx, next.refreshToken!))).toBe('invalid_refresh_token')
  })

  it('of 50 concurrent uses of one token all get the one same successor', async () => {
    const ctx = await context(driver)
    const first = await nativeSession(ctx)
    const results = await Promise.all(Array.from({ length: 50 }, () => native(ctx, first)))
    expect(new Set(results.map(r => r.refreshToken)).size).toBe(1)
    expect(results[0]!.refreshToken).not.toBe(first)
  })

  it('with a grace period of 0, of 50 concurrent uses exactly one succeeds', async () => {
    const ctx = await context(driver, { tokenRefresh: { reuseGracePeriod: 0 } as ModuleOptionsInput['tokenRefresh'] })
    const first = await nativeSession(ctx)
    const results = await Promise.all(Array.from({ length: 50 }, () => refusal(native(ctx, first))))
    expect(results.filter(r => r === 'granted')).toHaveLength(1)
  })

  it('a token of one channel is refused by the other and left as it is', async () => {
    const ctx = await context(driver)
    const nativeToken = await nativeSession(ctx)
    expect(await refusal(refreshSession(ctx, fakeEvent(), nativeToken, { channel: 'cookie' }))).toBe('invalid_refresh_token')
    expect(await readSessionRecord(ctx, nativeToken)).toBeNull()
    const rotated = await native(ctx, nativeToken)
    // A rotated native token is not the cookie's either, within the grace period.
    expect(await refusal(refreshSession(ctx, fakeEvent(), nativeToken, { channel: 'cookie' }))).toBe('invalid_refresh_token')
    expect(await readSessionRecord(ctx, nativeToken)).toBeNull()

    const browserCode = await createAuthCode(ctx, fakeEvent(), { user: { sub: 'u2' }, claims: {} }, { bindToBrowser: false })
    const cookieToken = (await startSession(ctx, fakeEvent(), await redeemAuthCode(ctx, fakeEvent(), browserCode, { channel: 'cookie' }), 'cookie')).refreshToken!
    expect(await refusal(native(ctx, cookieToken))).toBe('invalid_refresh_token')
    // Neither rotated nor reused: the cookie rotates it, and the native session goes on.
    expect((await refreshSession(ctx, fakeEvent(), cookieToken, { channel: 'cookie' })).refreshToken).not.toBe(cookieToken)
    expect((await native(ctx, rotated.refreshToken!)).refreshToken).not.toBe(rotated.refreshToken)
  })
})

describe.each(['redis', 'fs'] as const)('two processes sharing a %s store', (driver) => {
  it('refresh one native session: 50 concurrent uses split between them get one successor', async () => {
    const place = driver === 'redis' ? `${RUN}${randomUUID()}:` : join(tmpdir(), `svc-auth-native-shared-${randomUUID()}`)
    const a = await context(driver, {}, place)
    const b = await context(driver, {}, place)
    const first = await nativeSession(a)
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => native(i % 2 ? a : b, first)))
    expect(new Set(results.map(r => r.refreshToken)).size).toBe(1)
    const next = await native(b, results[0]!.refreshToken!)
    expect((await native(a, next.refreshToken!)).record.family).toBe(next.record.family)
  })
})
