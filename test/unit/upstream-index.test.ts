import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { resolveOptions } from '../../src/build/resolve-options'
import { createAuthContext, type AuthContext } from '../../src/runtime/server/lib/core/context'
import { issueRefreshToken, revokeFamily, rotateRefreshToken } from '../../src/runtime/server/lib/core/records/refresh-token'
import { indexUpstreamLogin, upstreamSessions, type UpstreamLogin } from '../../src/runtime/server/lib/core/records/upstream-login'
import { CORE_RECORDS } from '../../src/runtime/server/lib/core/records/core-records'
import type { ModuleOptionsInput } from '../../src/runtime/types/options'
import { testRedisUrl } from '../support/test-redis'
import { features } from './helpers/features'

const dirs: string[] = []
afterAll(() => Promise.all(dirs.map(dir => rm(dir, { recursive: true, force: true }))))

/** Options of two processes sharing one store on `driver` (the refresh lifetime is 100 s: indexes live 200 s). */
async function sharedStore(driver: 'memory' | 'fs' | 'redis'): Promise<ModuleOptionsInput> {
  const storage = driver === 'fs'
    ? { driver, base: await mkdtemp(join(tmpdir(), 'svc-auth-upstream-')) }
    : driver === 'redis' ? { driver, url: testRedisUrl(), prefix: `svc-auth-test:${randomUUID()}:` } : { driver }
  if (driver === 'fs') dirs.push(storage.base!)
  return { token: { secret: 'upstream-index-secret-0123456789-abcdefghij' }, tokenRefresh: { storage, cookie: { maxAge: 100 } }, logging: { level: 'silent' } }
}

const upstream = (sub: string, sid?: string, provider = 'acme'): UpstreamLogin => ({ provider, sub, idToken: 'header.payload.signature', ...(sid ? { sid } : {}) })

/** A session of `userId` started by the provider login `login`, indexed as the token exchange does. */
async function session(ctx: AuthContext, userId: string, login: UpstreamLogin) {
  const family = randomUUID()
  const indexed = await indexUpstreamLogin(ctx, { family, userId }, login)
  return issueRefreshToken(ctx, { family, user: { sub: userId }, userId, claims: {}, provider: login.provider, upstream: indexed })
}

/** Expiry (ms) of a session's entry in the index of the provider's `sid`. */
async function sidEntryExpiry(ctx: AuthContext, provider: string, sid: string, family: string): Promise<number | undefined> {
  const entries = await ctx.store.mapEntries(ctx.store.key(CORE_RECORDS.upstreamSid, `${provider}\0${sid}`), { safeParse: (value: unknown) => ({ success: true as const, data: value }) } as never)
  return entries.find(entry => entry.field === family)?.expiresAt
}

describe.each(['memory', 'fs', 'redis'] as const)('sessions by their provider login (%s)', (driver) => {
  it('are found by the provider\'s sid (of that sub only) or by its sub, per provider', async () => {
    const ctx = await createAuthContext(resolveOptions(await sharedStore(driver), true), { features })
    try {
      const a = await session(ctx, 'acme:u1', upstream('u1', 'sid-1'))
      const b = await session(ctx, 'acme:u1', upstream('u1', 'sid-2'))
      const other = await session(ctx, 'other:u1', upstream('u1', 'sid-1', 'other'))
      const family = (s: { record: { family: string } }) => s.record.family
      expect(await upstreamSessions(ctx, 'acme', { sid: 'sid-1' })).toEqual([{ family: family(a), userId: 'acme:u1' }])
      expect(await upstreamSessions(ctx, 'acme', { sid: 'sid-1', sub: 'u2' })).toEqual([])
      expect((await upstreamSessions(ctx, 'acme', { sub: 'u1' })).map(s => s.family).sort()).toEqual([family(a), family(b)].sort())
      expect(await upstreamSessions(ctx, 'other', { sub: 'u1' })).toEqual([{ family: family(other), userId: 'other:u1' }])
      expect(await upstreamSessions(ctx, 'acme', { sid: 'unknown' })).toEqual([])
      expect(await upstreamSessions(ctx, 'acme', {})).toEqual([])
      // Nothing of the provider's ids is readable in storage keys.
      expect((await ctx.store.list(CORE_RECORDS.upstreamSid)).join()).not.toMatch(/sid-1|acme/)
    }
    finally {
      await ctx.dispose()
    }
  })

  it('a rotation renews the indexes once half their lifetime has passed, and only then', async () => {
    const ctx = await createAuthContext(resolveOptions(await sharedStore(driver), true), { features })
    try {
      const old = Date.now() - 150_000
      const family = randomUUID()
      const indexed = await indexUpstreamLogin(ctx, { family, userId: 'acme:u3' }, upstream('u3', 'sid-3'), old)
      // As written 150 s ago: 50 s left.
      await ctx.store.mapSet(ctx.store.key(CORE_RECORDS.upstreamSid, 'acme\0sid-3'), family, { userId: 'acme:u3', sub: 'u3' }, 50)
      const { token } = await issueRefreshToken(ctx, { family, user: { sub: 'acme:u3' }, userId: 'acme:u3', claims: {}, upstream: indexed })
      const before = await sidEntryExpiry(ctx, 'acme', 'sid-3', family)
      const rotated = await rotateRefreshToken(ctx, token)
      expect(rotated.status).toBe('ok')
      const record = (rotated as { record: { upstream?: UpstreamLogin } }).record
      expect(record.upstream?.indexedAt).toBeGreaterThan(old + 100_000)
      const renewed = await sidEntryExpiry(ctx, 'acme', 'sid-3', family)
      expect(renewed).toBeDefined()
      // Written again now with 200 s: 150 s after the old entry's end.
      expect(renewed! - before!).toBeGreaterThan(100_000)
      // The next rotation finds it fresh: the entry is left as it is.
      await rotateRefreshToken(ctx, (rotated as { token: string }).token)
      expect(await sidEntryExpiry(ctx, 'acme', 'sid-3', family)).toBe(renewed)
    }
    finally {
      await ctx.dispose()
    }
  })
})

describe('two processes on Redis', () => {
  it('a back-channel logout handled by one refuses the session\'s access tokens on the other within 1 s', async () => {
    const input = await sharedStore('redis')
    const a = await createAuthContext(resolveOptions(input, true), { features })
    const b = await createAuthContext(resolveOptions(input, true), { features })
    try {
      const s = await session(b, 'acme:u4', upstream('u4', 'sid-4'))
      expect(b.revocations!.isRevoked(s.record.family)).toBe(false)
      for (const found of await upstreamSessions(a, 'acme', { sid: 'sid-4' })) await revokeFamily(a, found.family, found.userId, 'provider_logout')
      const deadline = Date.now() + 1000
      while (!b.revocations!.isRevoked(s.record.family) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
      expect(b.revocations!.isRevoked(s.record.family)).toBe(true)
    }
    finally {
      await Promise.all([a.dispose(), b.dispose()])
    }
  })
})
