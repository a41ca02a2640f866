import { randomUUID } from 'node:crypto'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { resolveOptions } from '../../src/build/resolve-options'
import { authenticate, authenticationError } from '../../src/runtime/server/lib/core/authenticate'
import { createAuthContext, type AuthContext } from '../../src/runtime/server/lib/core/context'
import { issueRefreshToken, revokeRefreshToken } from '../../src/runtime/server/lib/core/records/refresh-token'
import { mintSessionToken } from '../../src/runtime/server/lib/core/session-tokens'
import { markClaimsStale } from '../../src/runtime/server/lib/core/stale-claims'
import { loadRevokedSessions, parseRevokedMessage } from '../../src/runtime/server/lib/core/records/revoked-sessions'
import type { ModuleOptionsInput } from '../../src/runtime/types/options'
import { deleteRedisKeys } from '../support/redis-servers'
import { testRedisUrl } from '../support/test-redis'
import { unitContext } from './helpers/context'
import { fakeEvent } from './helpers/event'
import { authErrorCode } from '../../src/runtime/server/lib/edge/errors'
import { features } from './helpers/features'

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))
const RUN = `svc-auth-test:${randomUUID()}:`
afterAll(() => deleteRedisKeys(RUN))

const SECRET = 'unit-test-secret-0123456789-abcdefghijklm'
const ORGS: ModuleOptionsInput = { organizations: {} }

/** A session of `userId` and an access token of it, minted as a refresh does. */
async function sessionOf(ctx: AuthContext, userId: string) {
  const { token: cookie, record } = await issueRefreshToken(ctx, { user: { sub: userId }, userId, claims: {} })
  const { token } = await mintSessionToken(ctx, record, {})
  return { cookie, record, token }
}

/** What a request with `token` as its bearer gets: the subject, or the code of the 401. */
async function check(ctx: AuthContext, token: string): Promise<{ sub?: string, refused?: string }> {
  const event = fakeEvent({ headers: { authorization: `Bearer ${token}` } })
  const claims = await authenticate(event, ctx)
  return claims ? { sub: claims.sub } : { refused: authErrorCode(authenticationError(event)) }
}

describe('stale marks: a user\'s tokens issued before a change of their claims', () => {
  it('are refused with session_stale; a token minted after the mark is accepted; other users are untouched', async () => {
    const ctx = await unitContext(ORGS)
    const alice = await sessionOf(ctx, 'alice')
    const bob = await sessionOf(ctx, 'bob')
    expect(await check(ctx, alice.token)).toEqual({ sub: 'alice' })

    await markClaimsStale(ctx, 'alice')
    expect(await check(ctx, alice.token)).toEqual({ refused: 'session_stale' })
    expect(await check(ctx, bob.token)).toEqual({ sub: 'bob' })

    // A refresh right after the change waits for the mark's second, so its token is accepted at once.
    const started = Date.now()
    const { token: fresh } = await mintSessionToken(ctx, alice.record, {})
    expect(Date.now() - started).toBeLessThan(1500)
    expect(await check(ctx, fresh)).toEqual({ sub: 'alice' })
    expect(await check(ctx, alice.token)).toEqual({ refused: 'session_stale' })
  })

  it('mint a token past the mark even when timers fire a little early', async () => {
    const ctx = await unitContext(ORGS)
    const carol = await sessionOf(ctx, 'carol')
    await markClaimsStale(ctx, 'carol')
    // Timers that fire 5 ms before they are due, as Date.now() counts.
    const original = globalThis.setTimeout
    const early = ((fn: () => void, ms?: number) => original(fn, Math.max(0, (ms ?? 0) - 5))) as typeof setTimeout
    vi.stubGlobal('setTimeout', early)
    try {
      const { token } = await mintSessionToken(ctx, carol.record, {})
      expect(await check(ctx, token)).toEqual({ sub: 'carol' })
    }
    finally {
      vi.unstubAllGlobals()
    }
  })

  it('never hash an id while no mark is held, and are stored under a hash of the user\'s id', async () => {
    const ctx = await unitContext(ORGS)
    const { token } = await sessionOf(ctx, 'carol')
    const hash = ctx.store.hash
    let hashed = 0
    ctx.store.hash = (purpose, value) => {
      hashed++
      return hash(purpose, value)
    }
    expect(await check(ctx, token)).toEqual({ sub: 'carol' })
    expect(hashed).toBe(0)
    await markClaimsStale(ctx, 'dave')
    expect(await check(ctx, token)).toEqual({ sub: 'carol' })
    expect(hashed).toBeGreaterThan(1)
    ctx.store.hash = hash
    const stored = await loadRevokedSessions(ctx.store)
    expect(stored).toHaveLength(1)
    expect(stored[0]!.id).toMatch(/^[\da-f]{64}$/)
    expect(stored[0]!.id).not.toContain('dave')
    expect(stored[0]!.before! % 1000).toBe(0)
    expect(stored[0]!.before!).toBeGreaterThan(Date.now() - 1000)
  })

  it('leave impersonated tokens alone (they carry no claim of the user\'s role)', async () => {
    const ctx = await unitContext(ORGS)
    const { token } = await ctx.tokens.sign({ sub: 'erin', sid: 'imp_x', impersonation: { originalUserSub: 'admin', originalUserLookupId: 'admin', impersonatedAt: new Date().toISOString() } })
    await markClaimsStale(ctx, 'erin')
    expect(await check(ctx, token)).toEqual({ sub: 'erin' })
  })

  it('exist with organizations on even when sessions.revokeAccessTokens is off, which still leaves session tokens stateless', async () => {
    const ctx = await unitContext({ ...ORGS, sessions: { revokeAccessTokens: false } })
    expect(ctx.revocations).toBeDefined()
    const frank = await sessionOf(ctx, 'frank')
    await revokeRefreshToken(ctx, frank.cookie)
    expect(await check(ctx, frank.token)).toEqual({ sub: 'frank' })
    await markClaimsStale(ctx, 'frank')
    expect(await check(ctx, frank.token)).toEqual({ refused: 'session_stale' })
    const off = await unitContext({ sessions: { revokeAccessTokens: false } })
    expect(off.revocations).toBeUndefined()
    await expect(markClaimsStale(off, 'frank')).rejects.toThrow('revocation list')
  })

  it('reach a second process sharing a Redis within a second, and a process that starts later', async () => {
    const input: ModuleOptionsInput = { ...ORGS, token: { secret: SECRET }, tokenRefresh: { storage: { driver: 'redis', url: testRedisUrl(), prefix: `${RUN}${randomUUID()}:` } }, logging: { level: 'silent' } }
    const a = await createAuthContext(resolveOptions(input, true), { features })
    const b = await createAuthContext(resolveOptions(input, true), { features })
    try {
      const grace = await sessionOf(a, 'grace')
      const heidi = await sessionOf(a, 'heidi')
      expect(await check(b, grace.token)).toEqual({ sub: 'grace' })
      await markClaimsStale(a, 'grace')
      const marked = Date.now()
      let seen = await check(b, grace.token)
      while (seen.refused === undefined && Date.now() - marked < 1000) {
        await sleep(10)
        seen = await check(b, grace.token)
      }
      expect(seen).toEqual({ refused: 'session_stale' })
      expect(Date.now() - marked).toBeLessThan(1000)
      expect(await check(b, heidi.token)).toEqual({ sub: 'heidi' })
      // The other process mints past the mark too: its refresh is accepted on both.
      const { token: fresh } = await mintSessionToken(b, grace.record, {})
      expect(await check(a, fresh)).toEqual({ sub: 'grace' })
      expect(await check(b, fresh)).toEqual({ sub: 'grace' })
      const late = await createAuthContext(resolveOptions(input, true), { features })
      try {
        expect(await check(late, grace.token)).toEqual({ refused: 'session_stale' })
        expect(await check(late, fresh)).toEqual({ sub: 'grace' })
      }
      finally {
        await late.dispose()
      }
    }
    finally {
      await Promise.all([a.dispose(), b.dispose()])
    }
  })

  it('broadcast messages of both kinds parse, anything else is ignored', () => {
    expect(parseRevokedMessage('sid-1|1700000000000')).toEqual({ id: 'sid-1', expiresAt: 1700000000000 })
    expect(parseRevokedMessage('abc|1700000000000|1699999999000')).toEqual({ id: 'abc', expiresAt: 1700000000000, before: 1699999999000 })
    for (const bad of ['', 'sid', '|1', 'sid|x', 'a|1|', 'a|1|x', 'a|1|2|3']) expect(parseRevokedMessage(bad), bad).toBeNull()
  })
})
