import { randomUUID } from 'node:crypto'
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { resolveOptions } from '../../src/build/resolve-options'
import { authenticate, authenticationError } from '../../src/runtime/server/lib/core/authenticate'
import { authErrorCode } from '../../src/runtime/server/lib/edge/errors'
import { createAuthContext, type AuthContext } from '../../src/runtime/server/lib/core/context'
import { issueRefreshToken, readRefreshToken, revokeRefreshToken, rotateRefreshToken } from '../../src/runtime/server/lib/core/records/refresh-token'
import { RECORD_TYPES } from './helpers/record-types'
import { loadRevokedSessions } from '../../src/runtime/server/lib/core/records/revoked-sessions'
import { createRevocationList } from '../../src/runtime/server/lib/core/revocation'
import { listSessionEntries } from '../../src/runtime/server/lib/core/records/user-sessions'
import { listSessions, revokeSession, revokeSessions } from '../../src/runtime/server/lib/core/session-list'
import { addressPrefix, describeClient, userAgentFamily } from '../../src/runtime/server/lib/edge/client-description'
import type { ImpersonationContext, SessionRevokedPayload } from '../../src/runtime/types/auth'
import type { ModuleOptionsInput } from '../../src/runtime/types/options'
import { fakeEvent } from './helpers/event'
import { unitContext } from './helpers/context'
import { deleteRedisKeys } from '../support/redis-servers'
import { startUpstashRestServer, type UpstashRestServer } from '../helpers/upstash-rest-server.mjs'
import { testRedisUrl } from '../support/test-redis'
import { features } from './helpers/features'

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

/** Everything this file writes to the shared Redis and to disk, removed after it. */
const RUN = `svc-auth-test:${randomUUID()}:`
const dirs: string[] = []
const redisPrefix = () => `${RUN}${randomUUID()}:`
const scratchDir = (name: string) => {
  const dir = join(tmpdir(), `svc-auth-${name}-${randomUUID()}`)
  dirs.push(dir)
  return dir
}
/** The upstash driver's REST server (in front of the shared Redis), started on first use. */
let restServer: Promise<UpstashRestServer> | undefined
const upstashStorage = async () => {
  const rest = await (restServer ??= startUpstashRestServer({ token: `sessions-${randomUUID()}`, redis: testRedisUrl() }))
  return { driver: 'upstash' as const, url: rest.url, token: rest.token, prefix: redisPrefix() }
}
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  await (await restServer)?.close()
  await deleteRedisKeys(RUN)
})

async function login(ctx: AuthContext, userId: string, extra: { impersonation?: ImpersonationContext } = {}) {
  return issueRefreshToken(ctx, { user: { sub: userId }, userId, claims: {}, provider: 'password', client: { userAgent: 'Firefox on Linux', address: '203.0.113.0/24' }, ...extra })
}

const impersonation: ImpersonationContext = { originalUserSub: 'admin', originalUserLookupId: 'admin', impersonatedAt: new Date().toISOString() }

describe('client description', () => {
  it.each([
    ['Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', 'Firefox on Linux'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15', 'Safari on macOS'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0', 'Edge on Windows'],
    ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36', 'Chrome on Android'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/124.0 Mobile/15E148 Safari/604.1', 'Chrome on iOS'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36', 'Chrome on Linux'],
    ['curl/8.5.0', undefined],
    ['', undefined],
  ])('%s → %s', (ua, family) => {
    expect(userAgentFamily(ua)).toBe(family)
  })

  it.each([
    ['203.0.113.77', '203.0.113.0/24'],
    ['::ffff:198.51.100.9', '198.51.100.0/24'],
    ['2001:db8:1234:5678::1', '2001:db8:1234::/48'],
    ['2001:db8::1', '2001:db8::/48'],
    ['2001:0DB8:0000:0001::1', '2001:db8::/48'],
    ['2001:db8:0:1::1', '2001:db8::/48'],
    ['0:0:1::1', '0:0:1::/48'],
    ['::1', '::/48'],
    ['64:ff9b:1::192.0.2.33', '64:ff9b:1::/48'],
    ['::ffff:1.2.3.4', '1.2.3.0/24'],
    ['fe80::1%eth0', 'fe80::/48'],
    ['not an ip', undefined],
  ])('address %s → %s', (address, prefix) => {
    expect(addressPrefix(address)).toBe(prefix)
  })

  it('takes the address from X-Forwarded-For only behind a trusted proxy', async () => {
    const ctx = await unitContext()
    const headers = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', 'x-forwarded-for': '198.51.100.7' }
    expect(describeClient(fakeEvent({ headers, remoteAddress: '10.0.0.9' }), ctx)).toEqual({ userAgent: 'Firefox on Linux', address: '10.0.0.0/24' })
    const trusting = await unitContext({ rateLimit: { trustedProxies: ['10.0.0.0/8'] } })
    expect(describeClient(fakeEvent({ headers, remoteAddress: '10.0.0.9' }), trusting).address).toBe('198.51.100.0/24')
  })
})

describe('session list', () => {
  it('lists a user\'s sessions, newest use first, with the current one marked and nothing secret', async () => {
    const ctx = await unitContext()
    const first = await login(ctx, 'alice')
    await sleep(5)
    const second = await login(ctx, 'alice')
    await login(ctx, 'bob')
    await sleep(5)
    const rotated = await rotateRefreshToken(ctx, first.token)
    expect(rotated.status).toBe('ok')

    const sessions = await listSessions(ctx, 'alice', { currentSid: second.record.family, own: true })
    expect(sessions.map(s => s.id)).toEqual([first.record.family, second.record.family])
    expect(sessions.map(s => s.current)).toEqual([false, true])
    const [s1] = sessions
    expect(s1).toEqual({
      id: first.record.family,
      current: false,
      createdAt: new Date(first.record.createdAt).toISOString(),
      lastUsedAt: expect.any(String),
      provider: 'password',
      client: { userAgent: 'Firefox on Linux', address: '203.0.113.0/24' },
    })
    expect(Date.parse(s1!.lastUsedAt)).toBeGreaterThan(Date.parse(s1!.createdAt))
    expect(JSON.stringify(sessions)).not.toContain(first.token)
    expect(JSON.stringify(sessions)).not.toContain((rotated as { token: string }).token)
  })

  it('leaves impersonations of the user out of the user\'s own view, and shows them to the host', async () => {
    const ctx = await unitContext()
    const own = await login(ctx, 'alice')
    const imp = await login(ctx, 'alice', { impersonation })
    expect((await listSessions(ctx, 'alice', { own: true })).map(s => s.id)).toEqual([own.record.family])
    const all = await listSessions(ctx, 'alice')
    expect(all.find(s => s.id === imp.record.family)?.impersonatedBy).toBe('admin')
    // The user cannot end the impersonation; the host can.
    expect(await revokeSession(ctx, 'alice', imp.record.family, 'user', { own: true })).toBe(false)
    expect(await revokeSessions(ctx, 'alice', 'user', { except: own.record.family, own: true })).toBe(0)
    expect(await revokeSession(ctx, 'alice', imp.record.family, 'host')).toBe(true)
  })

  it('revoking one session: its refresh token dies, another user\'s id is refused, others live', async () => {
    const ctx = await unitContext()
    const a = await login(ctx, 'alice')
    const b = await login(ctx, 'alice')
    const bob = await login(ctx, 'bob')
    expect(await revokeSession(ctx, 'alice', bob.record.family, 'user', { own: true })).toBe(false)
    expect(await readRefreshToken(ctx, bob.token)).not.toBeNull()
    expect(await revokeSession(ctx, 'alice', a.record.family, 'user', { own: true })).toBe(true)
    expect(await revokeSession(ctx, 'alice', a.record.family, 'user', { own: true })).toBe(false)
    expect(await rotateRefreshToken(ctx, a.token)).toEqual({ status: 'invalid' })
    expect(await readRefreshToken(ctx, b.token)).not.toBeNull()
    expect((await listSessions(ctx, 'alice')).map(s => s.id)).toEqual([b.record.family])
  })

  it('revoking the others keeps the current one', async () => {
    const ctx = await unitContext()
    const keep = await login(ctx, 'alice')
    await Promise.all([login(ctx, 'alice'), login(ctx, 'alice')])
    expect(await revokeSessions(ctx, 'alice', 'user', { except: keep.record.family, own: true })).toBe(2)
    expect((await listSessions(ctx, 'alice')).map(s => s.id)).toEqual([keep.record.family])
  })

  it('a login whose token could not be stored is not listed', async () => {
    const ctx = await unitContext()
    const write = ctx.store.write
    ctx.store.write = async () => {
      ctx.store.write = write
      throw new Error('disk full')
    }
    await expect(login(ctx, 'alice')).rejects.toThrow('disk full')
    expect(await listSessionEntries(ctx, 'alice')).toEqual([])
  })

  it('a refresh under way while its session is revoked neither lists the session again nor keeps it alive', async () => {
    const ctx = await unitContext({ tokenRefresh: { storage: { driver: 'memory' }, reuseGracePeriod: 0 } })
    const s = await login(ctx, 'alice')
    // The rotation has read the token (live) and checked the session's revocation mark, and is
    // about to claim it when the session is revoked (stores whose commit is not one atomic step).
    const commit = ctx.store.commit
    ctx.store.commit = async (op) => {
      ctx.store.commit = commit
      expect(await revokeSession(ctx, 'alice', s.record.family, 'user', { own: true })).toBe(true)
      return commit({ ...op, guards: [] })
    }
    const raced = await rotateRefreshToken(ctx, s.token)
    expect(raced.status).toBe('ok')
    // The rotation wrote the session's map entry back; the session is still not listed, and the
    // entry is gone once listed.
    expect((await listSessionEntries(ctx, 'alice')).map(e => e.id)).toEqual([s.record.family])
    expect(await listSessions(ctx, 'alice')).toEqual([])
    expect(await listSessionEntries(ctx, 'alice')).toEqual([])
    // Its successor never refreshes, and the access tokens of the session (one minted by this
    // refresh too: the revoked id outlives the longest token by a minute) are refused.
    expect(await readRefreshToken(ctx, (raced as { token: string }).token)).toBeNull()
    expect(ctx.revocations!.isRevoked(s.record.family)).toBe(true)
    const [stored] = await loadRevokedSessions(ctx.store)
    expect(stored!.expiresAt - Date.now()).toBeGreaterThan((Math.max(ctx.lifetimes.access, ctx.lifetimes.impersonation, ctx.lifetimes.ssr) + 30) * 1000)
    expect(await revokeSessions(ctx, 'alice', 'host')).toBe(0)
  })
})

describe('concurrent ends of one session', () => {
  const storages = {
    memory: async () => ({ driver: 'memory' as const }),
    fs: async () => ({ driver: 'fs' as const, base: scratchDir('revoke-race') }),
    redis: async () => ({ driver: 'redis' as const, url: testRedisUrl(), prefix: redisPrefix() }),
    upstash: upstashStorage,
  }

  it.each(Object.keys(storages) as Array<keyof typeof storages>)('%s: of 50 at once exactly one ends it, reported once', async (driver) => {
    const revoked: SessionRevokedPayload[] = []
    const options = resolveOptions({ token: { secret: 'unit-test-secret-0123456789-abcdefghijklm' }, tokenRefresh: { storage: await storages[driver]() }, logging: { level: 'silent' } }, true)
    const ctx = await createAuthContext(options, { features, callHook: async (name, payload) => {
      if (name === 'svc:session:revoked') revoked.push(payload as SessionRevokedPayload)
    } })
    try {
      const { record } = await login(ctx, 'alice')
      const ended = await Promise.all(Array.from({ length: 50 }, () => revokeSession(ctx, 'alice', record.family, 'host')))
      expect(ended.filter(Boolean)).toHaveLength(1)
      expect(revoked).toEqual([{ sessionId: record.family, userId: 'alice', reason: 'host' }])
      expect(await listSessions(ctx, 'alice')).toEqual([])
    }
    finally {
      await ctx.dispose()
    }
  })
})

describe('access tokens die with their session', () => {
  it('every revocation path puts the session in the revoked set at once, with the hook told why', async () => {
    const calls: SessionRevokedPayload[] = []
    const ctx = await createAuthContext(resolveOptions({ token: { secret: 'unit-test-secret-0123456789-abcdefghijklm' }, tokenRefresh: { storage: { driver: 'memory' }, reuseGracePeriod: 0 }, logging: { level: 'silent' } }, true), { callHook: async (name, payload) => {
      if (name === 'svc:session:revoked') calls.push(payload as SessionRevokedPayload)
    }, features })
    try {
      const revocations = ctx.revocations!
      const out = await login(ctx, 'alice')
      expect(revocations.isRevoked(out.record.family)).toBe(false)
      await revokeRefreshToken(ctx, out.token)
      expect(revocations.isRevoked(out.record.family)).toBe(true)

      const stolen = await login(ctx, 'alice')
      await rotateRefreshToken(ctx, stolen.token)
      expect(await rotateRefreshToken(ctx, stolen.token)).toMatchObject({ status: 'reused' })
      expect(revocations.isRevoked(stolen.record.family)).toBe(true)

      const mine = await login(ctx, 'alice')
      expect(await revokeSession(ctx, 'alice', mine.record.family, 'user')).toBe(true)
      expect(revocations.isRevoked(mine.record.family)).toBe(true)
      expect(calls.map(c => [c.sessionId, c.userId, c.reason])).toEqual([
        [out.record.family, 'alice', 'logout'],
        [stolen.record.family, 'alice', 'refresh_token_reused'],
        [mine.record.family, 'alice', 'user'],
      ])
    }
    finally {
      await ctx.dispose()
    }
  })

  it('a failing hook never undoes the revocation', async () => {
    const ctx = await createAuthContext(resolveOptions({ token: { secret: 'unit-test-secret-0123456789-abcdefghijklm' }, tokenRefresh: { storage: { driver: 'memory' } }, logging: { level: 'silent' } }, true), { callHook: async () => {
      throw new Error('audit log down')
    }, features })
    try {
      const s = await login(ctx, 'alice')
      expect(await revokeSession(ctx, 'alice', s.record.family, 'host')).toBe(true)
      expect(ctx.revocations!.isRevoked(s.record.family)).toBe(true)
      expect(await readRefreshToken(ctx, s.token)).toBeNull()
    }
    finally {
      await ctx.dispose()
    }
  })

  it('a revocation that fails part-way is completed by a retry, on every process', async () => {
    const input: ModuleOptionsInput = { token: { secret: 'unit-test-secret-0123456789-abcdefghijklm' }, tokenRefresh: { storage: { driver: 'redis', url: testRedisUrl(), prefix: redisPrefix() } }, logging: { level: 'silent' } }
    const a = await createAuthContext(resolveOptions(input, true), { features })
    const b = await createAuthContext(resolveOptions(input, true), { features })
    try {
      const s = await login(a, 'alice')
      // The store refuses the first write of the revoked-session list (a Redis error, say).
      const mapSet = a.store.mapSet
      a.store.mapSet = async () => {
        a.store.mapSet = mapSet
        throw new Error('connection lost')
      }
      await expect(revokeSession(a, 'alice', s.record.family, 'user', { own: true })).rejects.toThrow('connection lost')
      // The session is still listed, so the retry finds it and ends it, broadcast included.
      expect(await revokeSession(a, 'alice', s.record.family, 'user', { own: true })).toBe(true)
      const deadline = Date.now() + 1000
      while (!b.revocations!.isRevoked(s.record.family) && Date.now() < deadline) await sleep(20)
      expect(b.revocations!.isRevoked(s.record.family)).toBe(true)
      expect(await listSessions(b, 'alice')).toEqual([])
    }
    finally {
      await Promise.all([a.dispose(), b.dispose()])
    }
  })

  it('sessions.revokeAccessTokens: false keeps access tokens stateless (no revoked set)', async () => {
    const ctx = await unitContext({ sessions: { revokeAccessTokens: false } })
    expect(ctx.revocations).toBeUndefined()
    const s = await login(ctx, 'alice')
    await revokeRefreshToken(ctx, s.token)
    expect(await readRefreshToken(ctx, s.token)).toBeNull()
  })

  describe.each(['redis', 'fs', 'upstash'] as const)('two processes sharing a %s store', (driver) => {
    const options = async (): Promise<ModuleOptionsInput> => ({
      token: { secret: 'unit-test-secret-0123456789-abcdefghijklm', expiresIn: '2m' },
      tokenRefresh: { storage: driver === 'redis' ? { driver, url: testRedisUrl(), prefix: redisPrefix() } : driver === 'upstash' ? await upstashStorage() : { driver, base: scratchDir('sessions') } },
      logging: { level: 'silent' },
    })

    // Redis broadcasts: within a second (milliseconds in practice). fs has no broadcasts: a reload
    // every second, so "about a second". upstash reloads when a check finds the list older than
    // 2 s. The margin is for a loaded machine.
    const within = driver === 'redis' ? 1000 : 3000

    it(`a revocation on one is seen by the other within ${within / 1000} s, and by a process that starts later`, async () => {
      const input = await options()
      const a = await createAuthContext(resolveOptions(input, true), { features })
      const b = await createAuthContext(resolveOptions(input, true), { features })
      const seen = async (ctx: AuthContext, sid: string) => {
        await ctx.revocations!.whenFresh()
        return ctx.revocations!.isRevoked(sid)
      }
      try {
        const s = await login(a, 'alice')
        expect(await seen(b, s.record.family)).toBe(false)
        await revokeRefreshToken(a, s.token)
        const deadline = Date.now() + within
        while (!(await seen(b, s.record.family)) && Date.now() < deadline) await sleep(20)
        expect(b.revocations!.isRevoked(s.record.family)).toBe(true)
        const late = await createAuthContext(resolveOptions(input, true), { features })
        try {
          expect(await seen(late, s.record.family)).toBe(true)
          expect(await seen(late, 'some-other-session')).toBe(false)
        }
        finally {
          await late.dispose()
        }
      }
      finally {
        await Promise.all([a.dispose(), b.dispose()])
      }
    })
  })
})

describe('revoked sessions reloaded on demand (upstash: no broadcasts, no timers)', () => {
  /** What `authenticate` makes of `token` on `ctx`: the user, or the code of the 401. */
  async function check(ctx: AuthContext, token: string) {
    const event = fakeEvent({ headers: { authorization: `Bearer ${token}` } })
    const user = await authenticate(event, ctx)
    return { sub: user?.sub, refused: user ? undefined : authErrorCode(authenticationError(event)) }
  }

  async function twoProcesses() {
    const input: ModuleOptionsInput = { token: { secret: 'unit-test-secret-0123456789-abcdefghijklm' }, tokenRefresh: { storage: await upstashStorage() }, logging: { level: 'silent' } }
    const setInterval = vi.spyOn(globalThis, 'setInterval')
    const fetch = vi.spyOn(globalThis, 'fetch')
    const a = await createAuthContext(resolveOptions(input, true), { features })
    const b = await createAuthContext(resolveOptions(input, true), { features })
    // Neither a timer nor a request to the store at start: Workers allow I/O only within a request.
    const timers = setInterval.mock.calls.length
    const requests = fetch.mock.calls.length
    setInterval.mockRestore()
    fetch.mockRestore()
    return { a, b, timers, requests }
  }

  it('a session revoked through one process is refused by another once the list is older than 2 s: one reload for 50 concurrent checks, no timer', async () => {
    const { a, b, timers, requests } = await twoProcesses()
    try {
      expect(timers).toBe(0)
      expect(requests).toBe(0)
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() })
      const s = await login(a, 'alice')
      const { token } = await a.tokens.sign({ sub: 'alice', sid: s.record.family })
      expect(await check(b, token)).toEqual({ sub: 'alice', refused: undefined })
      await revokeRefreshToken(a, s.token)
      expect(await check(a, token)).toEqual({ sub: undefined, refused: 'session_revoked' })

      const reloads = vi.spyOn(b.store, 'mapEntries')
      // Within the poll interval the other process still answers from its list: the delay a
      // revocation takes to reach it, at most 2 s.
      vi.setSystemTime(Date.now() + 1_500)
      expect(await check(b, token)).toEqual({ sub: 'alice', refused: undefined })
      expect(reloads).not.toHaveBeenCalled()
      // Older than that: the checks wait for one reload, which they share.
      vi.setSystemTime(Date.now() + 600)
      const results = await Promise.all(Array.from({ length: 50 }, () => check(b, token)))
      expect(results).toEqual(Array.from({ length: 50 }, () => ({ sub: undefined, refused: 'session_revoked' })))
      expect(reloads).toHaveBeenCalledTimes(1)
      // A token without a session id (no refresh token behind it) waits for nothing.
      vi.setSystemTime(Date.now() + 2_100)
      const { token: stateless } = await b.tokens.sign({ sub: 'bob' })
      expect(await check(b, stateless)).toEqual({ sub: 'bob', refused: undefined })
      expect(reloads).toHaveBeenCalledTimes(1)
    }
    finally {
      vi.useRealTimers()
      await Promise.all([a.dispose(), b.dispose()])
    }
  })

  it('a reload that fails is logged and the list as last loaded is used for 250 ms; it does not count as fresh, so the next try follows', async () => {
    const { a, b } = await twoProcesses()
    try {
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() })
      const live = await login(a, 'carol')
      const { token } = await a.tokens.sign({ sub: 'carol', sid: live.record.family })
      const doomed = await login(a, 'alice')
      const { token: doomedToken } = await a.tokens.sign({ sub: 'alice', sid: doomed.record.family })
      expect(await check(b, token)).toEqual({ sub: 'carol', refused: undefined })
      // Revoked on the other process after this one loaded its list.
      await revokeRefreshToken(a, doomed.token)
      const reloads = vi.spyOn(b.store, 'mapEntries').mockRejectedValueOnce(new Error('REST server unreachable'))
      const warn = vi.spyOn(b.logger, 'warn')
      vi.setSystemTime(Date.now() + 2_100)
      expect(await check(b, doomedToken)).toEqual({ sub: 'alice', refused: undefined })
      expect(reloads).toHaveBeenCalledTimes(1)
      expect(warn).toHaveBeenCalledWith('Could not load the revoked sessions', expect.any(Error))
      // Not one failing reload per request: for 250 ms the list as last loaded answers.
      vi.setSystemTime(Date.now() + 200)
      expect(await check(b, doomedToken)).toEqual({ sub: 'alice', refused: undefined })
      expect(reloads).toHaveBeenCalledTimes(1)
      // Then the next check tries again (the failed reload did not make the list fresh): the store
      // is back, and the revocation is seen 2.4 s after it, not a poll interval later.
      vi.setSystemTime(Date.now() + 100)
      expect(await check(b, doomedToken)).toEqual({ sub: undefined, refused: 'session_revoked' })
      expect(reloads).toHaveBeenCalledTimes(2)
      expect(await check(b, token)).toEqual({ sub: 'carol', refused: undefined })
      expect(reloads).toHaveBeenCalledTimes(2)
    }
    finally {
      vi.useRealTimers()
      await Promise.all([a.dispose(), b.dispose()])
    }
  })

  it('nothing is loaded before the first check; until a load succeeds, checks fail (closed), one load at a time', async () => {
    const { a, b } = await twoProcesses()
    try {
      const session = await login(a, 'alice')
      const { token } = await a.tokens.sign({ sub: 'alice', sid: session.record.family })
      await revokeRefreshToken(a, session.token)
      // A store that takes 100 ms to fail: the checks meanwhile wait for that one load.
      const loads = vi.spyOn(b.store, 'mapEntries').mockImplementation(async () => {
        await sleep(100)
        throw new Error('REST server unreachable')
      })
      const failed = await Promise.all(Array.from({ length: 10 }, () => check(b, token).then(() => 'answered', (error: Error) => error.message)))
      expect(failed).toEqual(Array.from({ length: 10 }, () => 'REST server unreachable'))
      expect(loads).toHaveBeenCalledTimes(1)
      // The next check tries again at once (nothing was ever loaded), and this time it loads.
      loads.mockRestore()
      expect(await check(b, token)).toEqual({ sub: undefined, refused: 'session_revoked' })
    }
    finally {
      await Promise.all([a.dispose(), b.dispose()])
    }
  })

  it('other drivers never make a check wait', async () => {
    const ctx = await unitContext()
    expect(ctx.revocations!.whenFresh()).toBeUndefined()
  })
})

/** Ids of the connections of a Redis that are subscribed to channels. */
async function pubsubClients(redis: { call(...args: string[]): Promise<unknown> }): Promise<string[]> {
  const list = String(await redis.call('CLIENT', 'LIST', 'TYPE', 'pubsub'))
  return [...list.matchAll(/\bid=(\d+)/g)].map(m => m[1]!)
}

describe('a process that missed a broadcast', () => {
  it('loads the revoked sessions again when its Redis subscription reconnects', async () => {
    const input: ModuleOptionsInput = { token: { secret: 'unit-test-secret-0123456789-abcdefghijklm' }, tokenRefresh: { storage: { driver: 'redis', url: testRedisUrl(), prefix: redisPrefix() } }, logging: { level: 'silent' } }
    const { Redis } = await import('ioredis')
    const admin = new Redis(testRedisUrl())
    // This process's subscriber is the one that appears with it (other tests share this Redis).
    const before = new Set(await pubsubClients(admin))
    const ctx = await createAuthContext(resolveOptions(input, true), { features })
    try {
      // A revocation stored while this process was not listening: no broadcast reaches it.
      await ctx.store.mapSet(ctx.store.namedKey(RECORD_TYPES.revokedSessions), 'missed-session', Date.now(), 60)
      await sleep(100)
      expect(ctx.revocations!.isRevoked('missed-session')).toBe(false)
      // Its subscriber connection drops; ioredis reconnects, and the list is loaded again.
      const mine = (await pubsubClients(admin)).filter(id => !before.has(id))
      expect(mine.length).toBeGreaterThan(0)
      for (const id of mine) await admin.call('CLIENT', 'KILL', 'ID', id)
      const deadline = Date.now() + 5000
      while (!ctx.revocations!.isRevoked('missed-session') && Date.now() < deadline) await sleep(50)
      expect(ctx.revocations!.isRevoked('missed-session')).toBe(true)
    }
    finally {
      await admin.quit()
      await ctx.dispose()
    }
  })
})

describe('the in-process revoked set', () => {
  it('reloads one at a time however often it is asked to, and never skips one asked for', async () => {
    const ctx = await unitContext()
    let running = 0
    let most = 0
    let reloads = 0
    const store = { ...ctx.store, mapEntries: async <T>(...args: Parameters<typeof ctx.store.mapEntries<T>>) => {
      running++
      reloads++
      most = Math.max(most, running)
      await sleep(100)
      running--
      return ctx.store.mapEntries<T>(...args)
    } }
    const list = await createRevocationList(store, { ttlSeconds: 60, pollMs: 10, logger: { warn: () => {} } })
    try {
      // Stored meanwhile (by another process): a reload asked for during a slow one still sees it.
      await ctx.store.mapSet(ctx.store.namedKey(RECORD_TYPES.revokedSessions), 'late-session', Date.now(), 60)
      // Polls every 10 ms, each reload takes 100 ms: without the queue they would overlap.
      const deadline = Date.now() + 10_000
      while ((reloads < 4 || !list.isRevoked('late-session')) && Date.now() < deadline) await sleep(20)
      expect(most).toBe(1)
      expect(reloads).toBeGreaterThanOrEqual(4)
      expect(list.isRevoked('late-session')).toBe(true)
    }
    finally {
      await list.dispose()
    }
  })

  it('forgets ids whose access tokens have expired, also where it never reloads (memory)', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] })
    try {
      const ctx = await unitContext()
      const list = await createRevocationList(ctx.store, { ttlSeconds: 30, pollMs: 0, logger: { warn: () => {} } })
      for (let i = 0; i < 100; i++) await list.revoke(`session-${i}`)
      expect(list.isRevoked('session-0')).toBe(true)
      expect(list.size()).toBe(100)
      await vi.advanceTimersByTimeAsync(61_000)
      expect(list.size()).toBe(0)
      await list.dispose()
    }
    finally {
      vi.useRealTimers()
    }
  })
})

describe('key rotation of the store', () => {
  const SECRET_A = 'store-secret-a-0123456789-abcdefghijklmnop'
  const SECRET_B = 'store-secret-b-0123456789-abcdefghijklmnop'
  const KEY_A = 'encryption-key-a-0123456789-abcdefghijklmnop'
  const KEY_B = 'encryption-key-b-0123456789-abcdefghijklmnop'

  it('records written under the previous HMAC secret and encryption key stay readable; new ones use the new keys', async () => {
    const base = scratchDir('rotation')
    const make = (token: ModuleOptionsInput['token'], encryption: ModuleOptionsInput['tokenRefresh'] extends infer T ? T extends { encryption?: infer E } ? E : never : never) =>
      createAuthContext(resolveOptions({ token, tokenRefresh: { storage: { driver: 'fs', base }, encryption }, logging: { level: 'silent' } }, true), { features })
    const before = await make({ secret: SECRET_A }, { enabled: true, key: KEY_A })
    const old = await login(before, 'alice')
    const untouched = await login(before, 'carol')
    await before.dispose()

    const after = await make({ secret: SECRET_B, previousSecrets: [SECRET_A] } as ModuleOptionsInput['token'], { enabled: true, key: KEY_B, previousKeys: [KEY_A] })
    try {
      expect((await readRefreshToken(after, old.token))?.record.family).toBe(old.record.family)
      expect((await listSessions(after, 'alice')).map(s => s.id)).toEqual([old.record.family])
      // Rotating the old token writes its successor under the new keys only.
      const rotated = await rotateRefreshToken(after, old.token)
      expect(rotated.status).toBe('ok')
      const successor = (rotated as { token: string }).token
      const onlyNew = await make({ secret: SECRET_B }, { enabled: true, key: KEY_B })
      try {
        expect(await readRefreshToken(onlyNew, successor)).not.toBeNull()
        // A record of before the change is found through the previous keys only.
        expect(await readRefreshToken(onlyNew, untouched.token)).toBeNull()
        expect(await readRefreshToken(after, untouched.token)).not.toBeNull()
      }
      finally {
        await onlyNew.dispose()
      }
      // Within the grace period the old token still finds the same successor (sealed under the new key).
      const again = await rotateRefreshToken(after, old.token)
      expect(again.status === 'ok' && again.token).toBe(successor)
    }
    finally {
      await after.dispose()
    }
    const without = await make({ secret: SECRET_B }, { enabled: true, key: KEY_B })
    try {
      const fresh = await login(without, 'bob')
      expect(await readRefreshToken(without, fresh.token)).not.toBeNull()
    }
    finally {
      await without.dispose()
    }
  })
})

describe('code binding across a rotation of the server secret', () => {
  it('a code bound before the rotation is accepted from its browser after it, not from another', async () => {
    const { createAuthCode, consumeAuthCode } = await import('../../src/runtime/server/lib/core/records/auth-code')
    const { matchesCodeBinding } = await import('../../src/runtime/server/lib/core/code-binding')
    const { setCookies } = await import('./helpers/event')
    const base = scratchDir('binding')
    const OLD = 'binding-secret-old-0123456789-abcdefghijk'
    const NEW = 'binding-secret-new-0123456789-abcdefghijk'
    const make = (token: ModuleOptionsInput['token']) => createAuthContext(resolveOptions({ token, tokenRefresh: { storage: { driver: 'fs', base } }, logging: { level: 'silent' } }, true), { features })
    const before = await make({ secret: OLD })
    const issued = fakeEvent()
    const code = await createAuthCode(before, issued, { user: { sub: 'u1' }, claims: {} })
    await before.dispose()
    const browser = setCookies(issued).map(line => line.split(';')[0]).join('; ')
    const after = await make({ secret: NEW, previousSecrets: [OLD] } as ModuleOptionsInput['token'])
    try {
      const record = await consumeAuthCode(after, code)
      expect(record?.binding).toBeTruthy()
      expect(matchesCodeBinding(fakeEvent({ headers: { cookie: browser } }), after, record!.binding!)).toBe(true)
      expect(matchesCodeBinding(fakeEvent({ headers: { cookie: 'svc-code=someone-else' } }), after, record!.binding!)).toBe(false)
    }
    finally {
      await after.dispose()
    }
  })
})
