import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { AuthContext } from '../../src/runtime/server/lib/core/context'
import { codeCookieName, matchesCodeBinding } from '../../src/runtime/server/lib/core/code-binding'
import { consumeAuthCode, createAuthCode } from '../../src/runtime/server/lib/core/records/auth-code'
import { RECORD_TYPES } from './helpers/record-types'
import { createMagicCode, discardMagicCode, verifyMagicCode } from '../../src/runtime/password/server/magic-code'
import {
  issueRefreshToken,
  readRefreshToken,
  readSessionRecord,
  revokeFamily,
  revokeRefreshToken,
  rotateRefreshToken,
} from '../../src/runtime/server/lib/core/records/refresh-token'
import { listSessionEntries, removeSessionEntry } from '../../src/runtime/server/lib/core/records/user-sessions'
import { revokeSessions } from '../../src/runtime/server/lib/core/session-list'
import type { RefreshResult } from '../../src/runtime/server/lib/core/records/refresh-token'
import { RESET_SESSION_TTL, consumeResetSession, createResetSession, readResetSession } from '../../src/runtime/server/lib/core/records/reset-session'
import { storableUser } from '../../src/runtime/server/lib/core/records/stored-user'
import type { AuthUser, ImpersonationContext, MagicCodeAction } from '../../src/runtime/types/auth'
import { fakeEvent, setCookies, setCookieValue } from './helpers/event'
import { dumpStore, rawBackend, unitContext } from './helpers/context'

const SECRET = 'records-test-secret-0123456789-abcdefghijkl'
const ENCRYPTION_KEY = 'records-encryption-key-0123456789-abcdefgh'
const EMAIL = 'zoe.marker@example.com'

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

/** A fresh context on its own memory backend. */
function makeContext({ encryption = false, key = ENCRYPTION_KEY }: { encryption?: boolean, key?: string } = {}): Promise<AuthContext> {
  return unitContext({
    token: { secret: SECRET },
    tokenRefresh: {
      storage: { driver: 'memory' },
      ...(encryption ? { encryption: { enabled: true, key } } : {}),
    },
  })
}

/** Ids of the live sessions of a user, from the user's session map. */
async function sessionIdsOf(ctx: AuthContext, userId: string): Promise<string[]> {
  return (await listSessionEntries(ctx, userId)).map(entry => entry.id)
}

function revokeAllSessionsOf(ctx: AuthContext, userId: string, options: { except?: string } = {}): Promise<number> {
  return revokeSessions(ctx, userId, 'host', options)
}

/** Every live key and its stored (raw) value. */
const dump = dumpStore

/** Storage keys are `<prefix><namespace>:<hmac>` (plus a family for the per-user index). */
function expectOpaqueKeys(entries: Array<[string, string]>) {
  for (const [key] of entries) expect(key).toMatch(/^refresh:[a-z-]+:[0-9a-f]{64}(:[\w-]+)?$/)
}

function user(id: string, extra: AuthUser = {}): AuthUser {
  return { id, email: `${id}@example.com`, name: `User ${id}`, ...extra }
}

/** A 6-digit code other than `code`. */
function otherCode(code: string, offset = 1): string {
  return String((Number(code) + offset) % 1_000_000).padStart(6, '0')
}

function count<T>(items: T[], predicate: (item: T) => boolean): number {
  return items.filter(predicate).length
}

describe('storableUser', () => {
  it('strips sensitive keys at every depth', () => {
    const out = storableUser({ sub: 'u1', identities: [{ provider: 'github', access_token: 'gho_x', profile: { hashedPassword: '$2b$x', name: 'N' } }] })
    expect(out).toEqual({ sub: 'u1', identities: [{ provider: 'github', profile: { name: 'N' } }] })
    expect(JSON.stringify(out)).not.toMatch(/gho_x|\$2b\$/)
  })

  it('drops passwords, hashes, secrets and tokens', () => {
    const input: AuthUser = {
      id: 'u1',
      email: EMAIL,
      name: 'Zoë',
      roles: ['admin'],
      hashedPassword: '$argon2id$v=19$hash',
      password: 'hunter2',
      passwordHash: 'h',
      passwd: 'p',
      hash: 'h2',
      clientSecret: 's',
      api_secret: 's2',
      accessToken: 'at',
      refresh_token: 'rt',
      tokens: { access: 'x' },
      idToken: 'it',
    }
    const out = storableUser(input)
    expect(out).toEqual({ id: 'u1', email: EMAIL, name: 'Zoë', roles: ['admin'] })
    expect(input.password).toBe('hunter2')
  })

  it('drops values that are not JSON and returns a deep copy', () => {
    const nested = { plan: 'pro' }
    const out = storableUser({ id: 'u1', fn: () => 1, big: 1n, sym: Symbol('s'), missing: undefined, nested, when: new Date(0) })
    expect(out).toEqual({ id: 'u1', nested: { plan: 'pro' }, when: '1970-01-01T00:00:00.000Z' })
    nested.plan = 'free'
    expect(out.nested).toEqual({ plan: 'pro' })
  })
})

describe('auth codes', () => {
  it('are single use', async () => {
    const ctx = await makeContext()
    const code = await createAuthCode(ctx, fakeEvent(), { user: user('u1', { hashedPassword: 'h' }), claims: { role: 'admin' }, provider: 'github', redirect: '/after' })
    expect(code).toMatch(/^[\w-]{43}$/)
    const record = await consumeAuthCode(ctx, code)
    expect(record).not.toBeNull()
    expect(record!.user).toEqual(user('u1'))
    expect(record!.claims).toEqual({ role: 'admin' })
    expect(record!.provider).toBe('github')
    expect(record!.redirect).toBe('/after')
    expect(Math.abs(record!.issuedAt - Date.now())).toBeLessThan(5000)
    expect(await consumeAuthCode(ctx, code)).toBeNull()
  })

  it('unknown codes give null', async () => {
    const ctx = await makeContext()
    expect(await consumeAuthCode(ctx, 'not-a-code')).toBeNull()
  })

  it('of 50 concurrent consumes exactly one gets the record', async () => {
    const ctx = await makeContext()
    const code = await createAuthCode(ctx, fakeEvent(), { user: user('u1'), claims: {} })
    const results = await Promise.all(Array.from({ length: 50 }, () => consumeAuthCode(ctx, code)))
    expect(count(results, r => r !== null)).toBe(1)
  })

  it('live for authCode.expiresIn seconds', async () => {
    const ctx = await makeContext()
    await createAuthCode(ctx, fakeEvent(), { user: user('u1'), claims: {} })
    const [key] = await ctx.store.list(RECORD_TYPES.authCode)
    expect(await dump(ctx)).toHaveLength(1)
    const ttl = await ctx.store.ttl(ctx.store.at(key!))
    expect(ttl).not.toBeNull()
    expect(ttl!).toBeLessThanOrEqual(60)
    expect(ttl!).toBeGreaterThan(55)
  })

  it.each([false, true])('storage never holds the raw code (encryption %s)', async (encryption) => {
    const ctx = await makeContext({ encryption })
    const issuedTo = fakeEvent()
    const code = await createAuthCode(ctx, issuedTo, { user: user('u1', { email: EMAIL, password: 'hunter2' }), claims: {} })
    const binding = setCookieValue(issuedTo, codeCookieName(ctx))!
    const entries = await dump(ctx)
    expect(entries).toHaveLength(1)
    expectOpaqueKeys(entries)
    for (const [key, value] of entries) {
      expect(key).not.toContain(code)
      expect(value).not.toContain(code)
      expect(value).not.toContain(binding)
      expect(value).not.toContain('hunter2')
      if (encryption) expect(value).not.toContain(EMAIL)
      else expect(value).toContain(EMAIL)
    }
  })
})

describe('auth codes bound to a browser', () => {
  it('the answer that hands out a code sets an HttpOnly, SameSite=Lax __Host- cookie for 5 minutes', async () => {
    const ctx = await makeContext()
    const event = fakeEvent()
    await createAuthCode(ctx, event, { user: user('u1'), claims: {} })
    expect(codeCookieName(ctx)).toBe('__Host-svc-code')
    const [line] = setCookies(event)
    expect(line).toMatch(/^__Host-svc-code=[\w-]{43}; Max-Age=300; Path=\/; HttpOnly; Secure; SameSite=Lax$/)
  })

  it('without Secure cookies the name has no prefix', async () => {
    const ctx = await makeContext()
    ctx.options.tokenRefresh.cookie.secure = false
    expect(codeCookieName(ctx)).toBe('svc-code')
  })

  it('the record holds only an HMAC of the binding, which matches only the same browser', async () => {
    const ctx = await makeContext()
    const mine = fakeEvent()
    const code = await createAuthCode(ctx, mine, { user: user('u1'), claims: {} })
    const value = setCookieValue(mine, codeCookieName(ctx))!
    const record = await consumeAuthCode(ctx, code)
    expect(record!.binding).toMatch(/^[0-9a-f]{64}$/)
    expect(record!.binding).not.toContain(value)
    const cookie = (v: string) => fakeEvent({ headers: { cookie: `${codeCookieName(ctx)}=${v}` } })
    expect(matchesCodeBinding(cookie(value), ctx, record!.binding!)).toBe(true)
    expect(matchesCodeBinding(fakeEvent(), ctx, record!.binding!)).toBe(false)
    expect(matchesCodeBinding(cookie(`${value.slice(0, -1)}${value.endsWith('A') ? 'B' : 'A'}`), ctx, record!.binding!)).toBe(false)
    expect(matchesCodeBinding(cookie('short'), ctx, record!.binding!)).toBe(false)
  })

  it('a browser that already has a binding keeps it, so codes of two tabs stay valid together', async () => {
    const ctx = await makeContext()
    const first = fakeEvent()
    const a = await createAuthCode(ctx, first, { user: user('u1'), claims: {} })
    const value = setCookieValue(first, codeCookieName(ctx))!
    const second = fakeEvent({ headers: { cookie: `${codeCookieName(ctx)}=${value}` } })
    const b = await createAuthCode(ctx, second, { user: user('u1'), claims: {} })
    expect(setCookieValue(second, codeCookieName(ctx))).toBe(value)
    const browser = fakeEvent({ headers: { cookie: `${codeCookieName(ctx)}=${value}` } })
    for (const code of [a, b]) expect(matchesCodeBinding(browser, ctx, (await consumeAuthCode(ctx, code))!.binding!)).toBe(true)
  })

  it('bindToBrowser: false issues a code without a binding and sets no cookie', async () => {
    const ctx = await makeContext()
    const event = fakeEvent()
    const code = await createAuthCode(ctx, event, { user: user('u1'), claims: {} }, { bindToBrowser: false })
    expect(setCookies(event)).toEqual([])
    expect((await consumeAuthCode(ctx, code))!.binding).toBeUndefined()
  })
})

describe.each([
  { encryption: false },
  { encryption: true },
])('refresh tokens (encryption $encryption)', ({ encryption }) => {
  const issue = (ctx: AuthContext, userId = 'u1', extra: { impersonation?: ImpersonationContext } = {}) =>
    issueRefreshToken(ctx, { user: user(userId, { email: EMAIL, hashedPassword: 'hash-marker' }), userId, claims: { role: 'user' }, provider: 'password', ...extra })

  it('issue stores a record readable by the token', async () => {
    const ctx = await makeContext({ encryption })
    const { token, record } = await issue(ctx)
    expect(token).toMatch(/^[\w-]{43}$/)
    expect(record.userId).toBe('u1')
    expect(record.user.hashedPassword).toBeUndefined()
    const found = await readRefreshToken(ctx, token)
    expect(found?.record).toEqual(record)
    expect(await readRefreshToken(ctx, 'unknown')).toBeNull()
    expect(await sessionIdsOf(ctx, 'u1')).toEqual([record.family])
  })

  it('use rotates: a new token of the same family', async () => {
    const ctx = await makeContext({ encryption })
    const { token, record } = await issue(ctx)
    const result = await rotateRefreshToken(ctx, token)
    expect(result.status).toBe('ok')
    if (result.status !== 'ok') return
    expect(result.token).toBeDefined()
    expect(result.token).not.toBe(token)
    expect(result.record.family).toBe(record.family)
    expect(result.record.userId).toBe('u1')
    expect(result.record.claims).toEqual({ role: 'user' })
    expect(result.record.provider).toBe('password')
    expect((await readRefreshToken(ctx, result.token!))?.record.family).toBe(record.family)
    expect(await sessionIdsOf(ctx, 'u1')).toEqual([record.family])
    // The new token rotates in turn.
    const next = await rotateRefreshToken(ctx, result.token!)
    expect(next.status === 'ok' && next.token !== undefined && next.token !== result.token).toBe(true)
  })

  it('the old token within the grace period gets the same successor, not a second one', async () => {
    const ctx = await makeContext({ encryption })
    const { token } = await issue(ctx)
    const first = await rotateRefreshToken(ctx, token)
    expect(first.status === 'ok' && first.token).toBeTruthy()
    const again = await rotateRefreshToken(ctx, token)
    expect(again).toEqual(first)
    // Still within the grace period: the family stays live, with one token.
    const newest = first.status === 'ok' ? first.token! : ''
    expect(await readRefreshToken(ctx, newest)).not.toBeNull()
    expect(await readRefreshToken(ctx, token)).toBeNull()
  })

  it('readSessionRecord (SSR) reads a token rotated within the grace period as its session, without rotating or revoking', async () => {
    const ctx = await makeContext({ encryption })
    const { token, record } = await issue(ctx)
    expect((await readSessionRecord(ctx, token))?.family).toBe(record.family)
    const first = await rotateRefreshToken(ctx, token)
    const newest = first.status === 'ok' ? first.token! : ''
    // A page load that still carries the old cookie renders the session.
    const stale = await readSessionRecord(ctx, token)
    expect(stale?.family).toBe(record.family)
    expect(stale?.userId).toBe('u1')
    // Read only: the newest token is untouched, the old one still gets that same successor.
    expect(await readRefreshToken(ctx, newest)).not.toBeNull()
    expect(await rotateRefreshToken(ctx, token)).toEqual(first)
    expect(await readSessionRecord(ctx, 'unknown')).toBeNull()
    await revokeRefreshToken(ctx, newest)
    expect(await readSessionRecord(ctx, token)).toBeNull()
  })

  it('readSessionRecord refuses a rotated token without a grace period, and never revokes for it', async () => {
    const ctx = await makeContext({ encryption })
    ctx.options.tokenRefresh.reuseGracePeriod = 0
    const { token } = await issue(ctx)
    const rotated = await rotateRefreshToken(ctx, token)
    const newest = rotated.status === 'ok' ? rotated.token! : ''
    expect(await readSessionRecord(ctx, token)).toBeNull()
    expect(await readRefreshToken(ctx, newest)).not.toBeNull()
  })

  it('within the grace period the old token follows further rotations to the newest token', async () => {
    const ctx = await makeContext({ encryption })
    const { token } = await issue(ctx)
    const first = await rotateRefreshToken(ctx, token)
    const second = await rotateRefreshToken(ctx, (first as { token: string }).token)
    const third = await rotateRefreshToken(ctx, (second as { token: string }).token)
    expect(third.status).toBe('ok')
    const late = await rotateRefreshToken(ctx, token)
    expect(late).toEqual(third)
  })

  /** Rotates a new token, then loses the successor's record, as a crash after the claim would. */
  async function rotateAndLoseSuccessor(ctx: AuthContext) {
    const { token, record } = await issue(ctx)
    const first = await rotateRefreshToken(ctx, token)
    const successor = (first as { token: string }).token
    await ctx.store.remove(ctx.store.key(RECORD_TYPES.refreshToken, successor))
    return { token, record, successor }
  }

  it('a rotation claimed but never stored (a crash in between) is completed by a retry in the grace period', async () => {
    const ctx = await makeContext({ encryption })
    // Lose every write of the rotation but the claim: the successor's record and its index entry.
    const { token, record, successor } = await rotateAndLoseSuccessor(ctx)
    expect(await readRefreshToken(ctx, successor)).toBeNull()
    await removeSessionEntry(ctx, 'u1', record.family)
    expect(await sessionIdsOf(ctx, 'u1')).toEqual([])
    const retry = await rotateRefreshToken(ctx, token)
    expect(retry.status === 'ok' && retry.token).toBe(successor)
    expect((await readRefreshToken(ctx, successor))?.record.family).toBe(record.family)
    expect(await sessionIdsOf(ctx, 'u1')).toEqual([record.family])
    // Restored with what was left of its lifetime, not a fresh one.
    expect(await ctx.store.ttl(ctx.store.key(RECORD_TYPES.refreshToken, successor))).toBeLessThanOrEqual(ctx.lifetimes.refresh)
    const next = await rotateRefreshToken(ctx, successor)
    expect(next.status === 'ok' && next.token !== undefined && next.token !== successor).toBe(true)
  })

  it('a logout that runs while a retry restores the successor is never undone', async () => {
    const ctx = await makeContext({ encryption })
    const { token, record, successor } = await rotateAndLoseSuccessor(ctx)
    // The logout of the session lands right after the retry has written the successor back.
    const write = ctx.store.write.bind(ctx.store)
    ctx.store.write = async (key, value, ttl) => {
      await write(key, value, ttl)
      if (key.current === ctx.store.key(RECORD_TYPES.refreshToken, successor).current) await revokeFamily(ctx, record.family, 'u1', 'logout')
    }
    try {
      expect(await rotateRefreshToken(ctx, token)).toEqual({ status: 'invalid' })
    }
    finally {
      ctx.store.write = write
    }
    expect(await ctx.store.read(ctx.store.key(RECORD_TYPES.refreshToken, successor), z.unknown())).toBeNull()
    expect(await sessionIdsOf(ctx, 'u1')).toEqual([])
  })

  it('a rotation marker older than the grace period means reuse, even when the old record survived (crash mid-rotation)', async () => {
    const ctx = await makeContext({ encryption })
    ctx.options.tokenRefresh.reuseGracePeriod = 1
    const { token, record } = await issue(ctx)
    const tokenKey = ctx.store.key(RECORD_TYPES.refreshToken, token).current
    const stored = await rawBackend(ctx).get(tokenKey)
    const first = await rotateRefreshToken(ctx, token)
    expect(first.status).toBe('ok')
    // The old record is still there, as if the server died before deleting it.
    await rawBackend(ctx).set(tokenKey, stored!, 60_000)
    await sleep(1100)
    expect(await rotateRefreshToken(ctx, token)).toEqual({ status: 'reused', family: record.family, userId: 'u1' })
    expect(await rotateRefreshToken(ctx, (first as { token: string }).token)).toEqual({ status: 'invalid' })
  })

  it('a token whose record survived a crash mid-rotation is no SSR session after the grace period, and a refresh removes the record', async () => {
    const ctx = await makeContext({ encryption })
    ctx.options.tokenRefresh.reuseGracePeriod = 1
    const { token, record } = await issue(ctx)
    const tokenKey = ctx.store.key(RECORD_TYPES.refreshToken, token).current
    const stored = await rawBackend(ctx).get(tokenKey)
    expect((await rotateRefreshToken(ctx, token)).status).toBe('ok')
    await rawBackend(ctx).set(tokenKey, stored!, 60_000)
    expect((await readSessionRecord(ctx, token))?.family).toBe(record.family)
    await sleep(1100)
    expect(await readSessionRecord(ctx, token)).toBeNull()
    await rawBackend(ctx).set(tokenKey, stored!, 60_000)
    ctx.options.tokenRefresh.reuseGracePeriod = 10
    expect((await rotateRefreshToken(ctx, token)).status).toBe('ok')
    expect(await rawBackend(ctx).get(tokenKey)).toBeNull()
  })

  it('reuse after the grace period revokes the family: even the newest token is invalid', async () => {
    const ctx = await makeContext({ encryption })
    ctx.options.tokenRefresh.reuseGracePeriod = 0
    const { token, record } = await issue(ctx)
    const rotated = await rotateRefreshToken(ctx, token)
    expect(rotated.status === 'ok' && rotated.token).toBeTruthy()
    const newest = rotated.status === 'ok' ? rotated.token! : ''
    expect(await rotateRefreshToken(ctx, token)).toEqual({ status: 'reused', family: record.family, userId: 'u1' })
    expect(await rotateRefreshToken(ctx, newest)).toEqual({ status: 'invalid' })
    expect(await readRefreshToken(ctx, newest)).toBeNull()
    expect(await sessionIdsOf(ctx, 'u1')).toEqual([])
    // A second replay is just invalid (the family is already revoked).
    expect(await rotateRefreshToken(ctx, token)).toEqual({ status: 'invalid' })
  })

  it('reuse once a non-zero grace period has passed is detected', async () => {
    const ctx = await makeContext({ encryption })
    ctx.options.tokenRefresh.reuseGracePeriod = 1
    const { token, record } = await issue(ctx)
    const rotated = await rotateRefreshToken(ctx, token)
    const newest = rotated.status === 'ok' ? rotated.token : undefined
    expect(newest).toBeDefined()
    await sleep(1100)
    expect(await rotateRefreshToken(ctx, token)).toEqual({ status: 'reused', family: record.family, userId: 'u1' })
    expect(await rotateRefreshToken(ctx, newest!)).toEqual({ status: 'invalid' })
  })

  it('of 50 concurrent uses of one token within the grace period all get the one same successor', async () => {
    const ctx = await makeContext({ encryption })
    const { token, record } = await issue(ctx)
    const results: RefreshResult[] = await Promise.all(Array.from({ length: 50 }, () => rotateRefreshToken(ctx, token)))
    expect(results.every(r => r.status === 'ok')).toBe(true)
    const successors = new Set(results.map(r => (r.status === 'ok' ? r.token : 'none')))
    expect(successors.size).toBe(1)
    const [newest] = [...successors] as [string]
    expect(newest).toMatch(/^[\w-]{43}$/)
    for (const r of results) expect(r.status === 'ok' && r.record.family).toBe(record.family)
    expect(await readRefreshToken(ctx, newest)).not.toBeNull()
    expect(await sessionIdsOf(ctx, 'u1')).toEqual([record.family])
  })

  it('with a grace period of 0, of 50 concurrent uses exactly one succeeds', async () => {
    const ctx = await makeContext({ encryption })
    ctx.options.tokenRefresh.reuseGracePeriod = 0
    const { token } = await issue(ctx)
    const results: RefreshResult[] = await Promise.all(Array.from({ length: 50 }, () => rotateRefreshToken(ctx, token)))
    expect(count(results, r => r.status === 'ok')).toBe(1)
    expect(count(results, r => r.status === 'reused') + count(results, r => r.status === 'invalid')).toBe(49)
    expect(count(results, r => r.status === 'reused')).toBeGreaterThanOrEqual(1)
  })

  it('revokeRefreshToken makes the token invalid', async () => {
    const ctx = await makeContext({ encryption })
    const { token, record } = await issue(ctx)
    const revoked = await revokeRefreshToken(ctx, token)
    expect(revoked?.family).toBe(record.family)
    expect(await rotateRefreshToken(ctx, token)).toEqual({ status: 'invalid' })
    expect(await sessionIdsOf(ctx, 'u1')).toEqual([])
    expect(await revokeRefreshToken(ctx, token)).toBeNull()
    expect(await revokeRefreshToken(ctx, 'unknown')).toBeNull()
  })

  it('revoking a rotated token revokes the newest token of its family too', async () => {
    const ctx = await makeContext({ encryption })
    const { token, record } = await issue(ctx)
    const rotated = await rotateRefreshToken(ctx, token)
    const newest = rotated.status === 'ok' ? rotated.token! : ''
    expect(await revokeRefreshToken(ctx, token)).toEqual({ family: record.family, userId: 'u1' })
    expect(await rotateRefreshToken(ctx, newest)).toEqual({ status: 'invalid' })
    expect(await sessionIdsOf(ctx, 'u1')).toEqual([])
  })

  it('revoking a token rotated twice since (long after the grace period) still ends the session', async () => {
    const ctx = await makeContext({ encryption })
    ctx.options.tokenRefresh.reuseGracePeriod = 0
    const { token } = await issue(ctx)
    const second = (await rotateRefreshToken(ctx, token)) as { token: string }
    const third = (await rotateRefreshToken(ctx, second.token)) as { token: string }
    await revokeRefreshToken(ctx, token)
    expect(await rotateRefreshToken(ctx, third.token)).toEqual({ status: 'invalid' })
  })

  it('revokeFamily stops every token of the family', async () => {
    const ctx = await makeContext({ encryption })
    const a = await issue(ctx)
    const b = await issueRefreshToken(ctx, { family: a.record.family, user: user('u1'), userId: 'u1', claims: {} })
    await revokeFamily(ctx, a.record.family, 'u1', 'logout')
    expect(await rotateRefreshToken(ctx, a.token)).toEqual({ status: 'invalid' })
    expect(await rotateRefreshToken(ctx, b.token)).toEqual({ status: 'invalid' })
  })

  it('revokeAllSessionsOf revokes every family of that user and no other user\'s', async () => {
    const ctx = await makeContext({ encryption })
    const mine = await Promise.all([issue(ctx, 'alice'), issue(ctx, 'alice'), issue(ctx, 'alice')])
    const other = await issue(ctx, 'bob')
    expect((await sessionIdsOf(ctx, 'alice')).sort()).toEqual(mine.map(s => s.record.family).sort())
    expect(await revokeAllSessionsOf(ctx, 'alice')).toBe(3)
    for (const s of mine) expect(await rotateRefreshToken(ctx, s.token)).toEqual({ status: 'invalid' })
    expect(await sessionIdsOf(ctx, 'alice')).toEqual([])
    expect(await sessionIdsOf(ctx, 'bob')).toEqual([other.record.family])
    const bob = await rotateRefreshToken(ctx, other.token)
    expect(bob.status === 'ok' && bob.token !== undefined).toBe(true)
    expect(await revokeAllSessionsOf(ctx, 'nobody')).toBe(0)
  })

  it('revokeAllSessionsOf with except keeps that family', async () => {
    const ctx = await makeContext({ encryption })
    const [keep, drop1, drop2] = await Promise.all([issue(ctx, 'alice'), issue(ctx, 'alice'), issue(ctx, 'alice')])
    expect(await revokeAllSessionsOf(ctx, 'alice', { except: keep!.record.family })).toBe(2)
    expect(await sessionIdsOf(ctx, 'alice')).toEqual([keep!.record.family])
    expect(await rotateRefreshToken(ctx, drop1!.token)).toEqual({ status: 'invalid' })
    expect(await rotateRefreshToken(ctx, drop2!.token)).toEqual({ status: 'invalid' })
    const kept = await rotateRefreshToken(ctx, keep!.token)
    expect(kept.status === 'ok' && kept.token !== undefined).toBe(true)
  })

  it('sessionIdsOf lists the live families of one user', async () => {
    const ctx = await makeContext({ encryption })
    expect(await sessionIdsOf(ctx, 'alice')).toEqual([])
    const a = await issue(ctx, 'alice')
    const b = await issue(ctx, 'alice')
    await issue(ctx, 'alice-2')
    await issue(ctx, 'bob')
    expect((await sessionIdsOf(ctx, 'alice')).sort()).toEqual([a.record.family, b.record.family].sort())
    await revokeRefreshToken(ctx, a.token)
    expect(await sessionIdsOf(ctx, 'alice')).toEqual([b.record.family])
  })

  it('an impersonated session is refreshed without rotation', async () => {
    const ctx = await makeContext({ encryption })
    const impersonation: ImpersonationContext = {
      originalUserSub: 'admin-1',
      originalUserLookupId: 'admin-1',
      impersonatedAt: new Date().toISOString(),
    }
    const { token } = await issue(ctx, 'u1', { impersonation })
    const rotate = { rotate: (r: { impersonation?: ImpersonationContext }) => !r.impersonation }
    for (let i = 0; i < 3; i++) {
      const result = await rotateRefreshToken(ctx, token, rotate)
      expect(result.status).toBe('ok')
      if (result.status !== 'ok') return
      expect(result.token).toBeUndefined()
      expect(result.record.impersonation).toEqual(impersonation)
    }
    // A normal session under the same rule still rotates.
    const normal = await issue(ctx, 'u2')
    const rotated = await rotateRefreshToken(ctx, normal.token, rotate)
    expect(rotated.status === 'ok' && rotated.token !== undefined).toBe(true)
  })

  it('storage holds neither raw tokens nor secrets of the user', async () => {
    const ctx = await makeContext({ encryption })
    const { token } = await issue(ctx)
    const rotated = await rotateRefreshToken(ctx, token)
    const newest = rotated.status === 'ok' ? rotated.token! : ''
    const entries = await dump(ctx)
    expect(entries.length).toBeGreaterThan(2)
    expectOpaqueKeys(entries)
    for (const [key, value] of entries) {
      for (const raw of [token, newest]) {
        expect(key).not.toContain(raw)
        expect(value).not.toContain(raw)
      }
      expect(value).not.toContain('hash-marker')
      if (encryption) {
        expect(value).not.toContain(EMAIL)
        expect(value).toMatch(/^v1\./)
      }
    }
    if (!encryption) expect(entries.some(([, value]) => value.includes(EMAIL))).toBe(true)
  })
})

describe('records sealed with one key', () => {
  it('are not readable by a context with another encryption key', async () => {
    const ctx = await makeContext({ encryption: true })
    const { token } = await issueRefreshToken(ctx, { user: user('u1'), userId: 'u1', claims: {} })
    const other = await makeContext({ encryption: true, key: `${ENCRYPTION_KEY}-other` })
    // Copy the stored entries over verbatim.
    for (const [key, value] of await dump(ctx)) await rawBackend(other).set(key, value, 60_000)
    expect(await readRefreshToken(other, token)).toBeNull()
    expect(await rotateRefreshToken(other, token)).toEqual({ status: 'invalid' })
  })
})

describe('magic codes', () => {
  const verify = (ctx: AuthContext, code: string, extra: { email?: string, flow?: string, action?: MagicCodeAction, maxAttempts?: number, budget?: number, emailFailures?: number } = {}) =>
    verifyMagicCode<{ hashedPassword?: string }>(ctx, {
      action: extra.action ?? 'login',
      code,
      email: extra.email,
      flow: extra.flow,
      maxAttempts: extra.maxAttempts ?? 5,
      ttlSeconds: 600,
      codeOnlyBudget: extra.budget === undefined ? undefined : { max: extra.budget, windowSeconds: 3600 },
      emailFailureBudget: extra.emailFailures === undefined ? undefined : { max: extra.emailFailures, windowSeconds: 86400 },
    })

  const issueCode = (ctx: AuthContext, email = EMAIL, action: MagicCodeAction = 'login', ttlSeconds = 600) =>
    createMagicCode(ctx, { email, action, data: { hashedPassword: 'hash-of-password' }, ttlSeconds })
  const create = async (ctx: AuthContext, email = EMAIL, action: MagicCodeAction = 'login', ttlSeconds = 600) =>
    (await issueCode(ctx, email, action, ttlSeconds)).code

  it('verify by flow id applies the code\'s own attempt count and needs no email', async () => {
    const ctx = await makeContext()
    const { code, flow } = await issueCode(ctx)
    expect(flow).toMatch(/^[\w-]{22}$/)
    expect(await verify(ctx, otherCode(code), { flow, maxAttempts: 2 })).toEqual({ status: 'invalid' })
    expect(await verify(ctx, otherCode(code, 2), { flow, maxAttempts: 2 })).toEqual({ status: 'too_many_attempts' })
    expect(await verify(ctx, code, { flow, maxAttempts: 2 })).toEqual({ status: 'too_many_attempts' })
    const next = await issueCode(ctx)
    expect(await verify(ctx, next.code, { flow })).toEqual({ status: 'invalid' })
    const ok = await verify(ctx, next.code, { flow: next.flow })
    expect(ok.status === 'ok' && ok.record.email).toBe(EMAIL)
    expect(await verify(ctx, next.code, { flow: next.flow })).toEqual({ status: 'invalid' })
  })

  it('code-only misses draw on a global budget; identified verification is not affected', async () => {
    const ctx = await makeContext()
    const { code, flow } = await issueCode(ctx)
    let misses = 0
    for (let guess = 1; misses < 3; guess++) {
      if (otherCode(code, guess) === code) continue
      expect(await verify(ctx, otherCode(code, guess), { budget: 3 })).toEqual({ status: 'invalid' })
      misses++
    }
    const refused = await verify(ctx, code, { budget: 3 })
    expect(refused.status).toBe('budget_exhausted')
    // The right code through its link still works; the other action's budget is its own.
    expect((await verify(ctx, code, { flow, budget: 3 })).status).toBe('ok')
    const reset = await create(ctx, EMAIL, 'reset')
    expect((await verify(ctx, reset, { action: 'reset', budget: 3 })).status).toBe('ok')
  })

  it('the code-only budget shrinks as codes pile up: misses × outstanding codes stay bounded', async () => {
    const ctx = await makeContext()
    // An attacker has resets requested for 100 accounts: 100 codes outstanding.
    const codes = await Promise.all(Array.from({ length: 100 }, (_, i) => create(ctx, `victim${i}@example.com`, 'reset')))
    const taken = new Set(codes)
    const wrong = Array.from({ length: 1_000_000 }, (_, i) => String(i).padStart(6, '0')).filter(c => !taken.has(c)).slice(0, 10)
    const results = []
    for (const guess of wrong) results.push((await verify(ctx, guess, { action: 'reset', budget: 25 })).status)
    // 25 misses against 10 codes = 2 misses against 100.
    expect(results).toEqual(['invalid', 'invalid', ...Array.from({ length: 8 }, () => 'budget_exhausted')])
    // The login action has its own budget, still whole.
    expect((await verify(ctx, wrong[0]!, { budget: 25 })).status).toBe('invalid')
  })

  it('a code-only budget of 0 refuses code-only verification, not identified verification', async () => {
    const ctx = await makeContext()
    const { code, flow } = await issueCode(ctx)
    expect(await verify(ctx, code, { budget: 0 })).toEqual({ status: 'invalid' })
    expect((await verify(ctx, code, { flow, budget: 0 })).status).toBe('ok')
  })

  it('failures of one email are counted across its codes; a match gives its unit back', async () => {
    const ctx = await makeContext()
    const first = await issueCode(ctx)
    expect((await verify(ctx, otherCode(first.code), { email: EMAIL, emailFailures: 3 })).status).toBe('invalid')
    expect((await verify(ctx, otherCode(first.code, 2), { flow: first.flow, emailFailures: 3 })).status).toBe('invalid')
    // A new code does not reset this count (it does reset the per-code attempts).
    const second = await issueCode(ctx)
    expect((await verify(ctx, otherCode(second.code), { email: EMAIL, emailFailures: 3 })).status).toBe('invalid')
    const refused = await verify(ctx, second.code, { email: EMAIL, emailFailures: 3 })
    expect(refused.status).toBe('budget_exhausted')
    // Another email, and another action of this one, are not affected; a success releases its unit.
    const other = await issueCode(ctx, 'other@example.com')
    expect((await verify(ctx, other.code, { flow: other.flow, emailFailures: 3 })).status).toBe('ok')
    const reset = await issueCode(ctx, EMAIL, 'reset')
    expect((await verify(ctx, reset.code, { action: 'reset', flow: reset.flow, emailFailures: 1 })).status).toBe('ok')
    const again = await issueCode(ctx, EMAIL, 'reset')
    expect((await verify(ctx, again.code, { action: 'reset', flow: again.flow, emailFailures: 1 })).status).toBe('ok')
  })

  it('code-only hits give their unit back; 50 concurrent misses never overdraw the budget', async () => {
    const ctx = await makeContext()
    for (let i = 0; i < 5; i++) {
      const code = await create(ctx, `user${i}@example.com`)
      expect((await verify(ctx, code, { budget: 2 })).status).toBe('ok')
    }
    const code = await create(ctx)
    const guesses = Array.from({ length: 50 }, (_, i) => otherCode(code, i + 1))
    const results = await Promise.all(guesses.map(guess => verify(ctx, guess, { budget: 10 })))
    expect(count(results, r => r.status === 'invalid')).toBe(10)
    expect(count(results, r => r.status === 'budget_exhausted')).toBe(40)
  })

  it('verify by email succeeds once', async () => {
    const ctx = await makeContext()
    const code = await create(ctx)
    expect(code).toMatch(/^\d{6}$/)
    const result = await verify(ctx, code, { email: EMAIL })
    expect(result.status).toBe('ok')
    if (result.status !== 'ok') return
    expect(result.record.email).toBe(EMAIL)
    expect(result.record.action).toBe('login')
    expect(result.record.data).toEqual({ hashedPassword: 'hash-of-password' })
    expect(await verify(ctx, code, { email: EMAIL })).toEqual({ status: 'invalid' })
    expect(await verify(ctx, code)).toEqual({ status: 'invalid' })
  })

  it('verify by code only (no email) finds the email, once', async () => {
    const ctx = await makeContext()
    const code = await create(ctx)
    const result = await verify(ctx, code)
    expect(result.status === 'ok' && result.record.email).toBe(EMAIL)
    expect(await verify(ctx, code)).toEqual({ status: 'invalid' })
    expect(await verify(ctx, code, { email: EMAIL })).toEqual({ status: 'invalid' })
  })

  it('a wrong code is invalid and counts as an attempt', async () => {
    const ctx = await makeContext()
    const code = await create(ctx)
    expect(await verify(ctx, otherCode(code, 1), { email: EMAIL, maxAttempts: 3 })).toEqual({ status: 'invalid' })
    expect(await verify(ctx, otherCode(code, 2), { email: EMAIL, maxAttempts: 3 })).toEqual({ status: 'invalid' })
    // Under the limit the right code still works.
    expect((await verify(ctx, code, { email: EMAIL, maxAttempts: 3 })).status).toBe('ok')
  })

  it('the last allowed wrong attempt locks the code, even for the right code', async () => {
    const ctx = await makeContext()
    const code = await create(ctx)
    expect(await verify(ctx, otherCode(code, 1), { email: EMAIL, maxAttempts: 3 })).toEqual({ status: 'invalid' })
    expect(await verify(ctx, otherCode(code, 2), { email: EMAIL, maxAttempts: 3 })).toEqual({ status: 'invalid' })
    expect(await verify(ctx, otherCode(code, 3), { email: EMAIL, maxAttempts: 3 })).toEqual({ status: 'too_many_attempts' })
    expect(await verify(ctx, code, { email: EMAIL, maxAttempts: 3 })).toEqual({ status: 'too_many_attempts' })
    expect(await verify(ctx, code, { maxAttempts: 3 })).toEqual({ status: 'too_many_attempts' })
  })

  it('50 concurrent wrong guesses are all counted; the right code is then refused', async () => {
    const ctx = await makeContext()
    const code = await create(ctx)
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => verify(ctx, otherCode(code, i + 1), { email: EMAIL, maxAttempts: 5 })))
    expect(count(results, r => r.status === 'ok')).toBe(0)
    expect(count(results, r => r.status === 'invalid')).toBe(4)
    expect(count(results, r => r.status === 'too_many_attempts')).toBe(46)
    expect(await verify(ctx, code, { email: EMAIL, maxAttempts: 5 })).toEqual({ status: 'too_many_attempts' })
  })

  it('of 20 concurrent right guesses exactly one succeeds', async () => {
    const ctx = await makeContext()
    const code = await create(ctx)
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => verify(ctx, code, i % 2 ? { email: EMAIL, maxAttempts: 100 } : { maxAttempts: 100 })))
    expect(count(results, r => r.status === 'ok')).toBe(1)
  })

  it('a new code for the same email and action replaces the old one', async () => {
    const ctx = await makeContext()
    const first = await create(ctx)
    let second = await create(ctx)
    while (second === first) second = await create(ctx)
    expect(await verify(ctx, first)).toEqual({ status: 'invalid' })
    expect(await verify(ctx, first, { email: EMAIL })).toEqual({ status: 'invalid' })
    const result = await verify(ctx, second, { email: EMAIL })
    expect(result.status === 'ok' && result.record.email).toBe(EMAIL)
  })

  it('a new code starts with a fresh attempt count', async () => {
    const ctx = await makeContext()
    const first = await create(ctx)
    for (let i = 1; i <= 3; i++) await verify(ctx, otherCode(first, i), { email: EMAIL, maxAttempts: 3 })
    expect(await verify(ctx, first, { email: EMAIL, maxAttempts: 3 })).toEqual({ status: 'too_many_attempts' })
    const second = await create(ctx)
    expect((await verify(ctx, second, { email: EMAIL, maxAttempts: 3 })).status).toBe('ok')
  })

  it('codes expire', async () => {
    const ctx = await makeContext()
    const code = await create(ctx, EMAIL, 'login', 1)
    const other = await create(ctx, 'other@example.com', 'login', 1)
    await sleep(1100)
    expect(await verify(ctx, code, { email: EMAIL })).toEqual({ status: 'invalid' })
    expect(await verify(ctx, other)).toEqual({ status: 'invalid' })
  })

  it('codes of different actions do not mix', async () => {
    const ctx = await makeContext()
    const login = await create(ctx, EMAIL, 'login')
    let reset = await create(ctx, EMAIL, 'reset')
    while (reset === login) reset = await create(ctx, EMAIL, 'reset')
    expect(await verify(ctx, login, { action: 'reset' })).toEqual({ status: 'invalid' })
    expect(await verify(ctx, login, { action: 'register' })).toEqual({ status: 'invalid' })
    expect(await verify(ctx, login, { action: 'register', email: EMAIL })).toEqual({ status: 'invalid' })
    expect(await verify(ctx, login, { action: 'reset', email: EMAIL })).toEqual({ status: 'invalid' })
    const okLogin = await verify(ctx, login, { action: 'login', email: EMAIL })
    expect(okLogin.status === 'ok' && okLogin.record.action).toBe('login')
    const okReset = await verify(ctx, reset, { action: 'reset' })
    expect(okReset.status === 'ok' && okReset.record.action).toBe('reset')
  })

  it('codes of different emails do not mix', async () => {
    const ctx = await makeContext()
    const mine = await create(ctx, EMAIL)
    await create(ctx, 'bob@example.com')
    expect(await verify(ctx, mine, { email: 'bob@example.com' })).toEqual({ status: 'invalid' })
    expect(await verify(ctx, mine, { email: 'nobody@example.com' })).toEqual({ status: 'invalid' })
    expect((await verify(ctx, mine, { email: EMAIL })).status).toBe('ok')
  })

  it('discardMagicCode removes the pending code', async () => {
    const ctx = await makeContext()
    const code = await create(ctx)
    await discardMagicCode(ctx, 'login', EMAIL)
    expect(await verify(ctx, code)).toEqual({ status: 'invalid' })
    expect(await verify(ctx, code, { email: EMAIL })).toEqual({ status: 'invalid' })
    // Discarding nothing is harmless.
    await discardMagicCode(ctx, 'login', 'nobody@example.com')
  })

  it('storage keys are opaque and hold no plaintext email when encrypted', async () => {
    const ctx = await makeContext({ encryption: true })
    await create(ctx)
    const entries = await dump(ctx)
    expect(entries.length).toBeGreaterThanOrEqual(2)
    expectOpaqueKeys(entries)
    for (const [key, value] of entries) {
      expect(key).not.toContain(EMAIL)
      expect(value).not.toContain(EMAIL)
      expect(value).not.toContain('hash-of-password')
    }
  })
})

describe('reset sessions', () => {
  it('create, read (not consuming), consume once', async () => {
    const ctx = await makeContext()
    const id = await createResetSession(ctx, { email: EMAIL, userId: 'u1' })
    expect(id).toMatch(/^[\w-]{43}$/)
    const read = await readResetSession(ctx, id)
    expect(read).toMatchObject({ email: EMAIL, userId: 'u1' })
    expect(Math.abs(read!.createdAt - Date.now())).toBeLessThan(5000)
    expect(await readResetSession(ctx, id)).toEqual(read)
    expect(await consumeResetSession(ctx, id)).toEqual(read)
    expect(await consumeResetSession(ctx, id)).toBeNull()
    expect(await readResetSession(ctx, id)).toBeNull()
    expect(await readResetSession(ctx, 'unknown')).toBeNull()
  })

  it('of 50 concurrent consumes exactly one gets the session', async () => {
    const ctx = await makeContext()
    const id = await createResetSession(ctx, { email: EMAIL })
    const results = await Promise.all(Array.from({ length: 50 }, () => consumeResetSession(ctx, id)))
    expect(count(results, r => r !== null)).toBe(1)
  })

  it('expire after 300 seconds', async () => {
    expect(RESET_SESSION_TTL).toBe(300)
    const ctx = await makeContext()
    const id = await createResetSession(ctx, { email: EMAIL })
    const entries = await dump(ctx)
    expect(entries).toHaveLength(1)
    expectOpaqueKeys(entries)
    const [[key, value]] = entries as [[string, string]]
    expect(key).not.toContain(id)
    expect(value).not.toContain(id)
    expect(await ctx.store.list(RECORD_TYPES.resetSession)).toEqual([key])
    const ttl = await ctx.store.ttl(ctx.store.at(key))
    expect(ttl).not.toBeNull()
    expect(ttl!).toBeLessThanOrEqual(300)
    expect(ttl!).toBeGreaterThan(290)
  })
})
