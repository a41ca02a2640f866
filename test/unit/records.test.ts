import { afterAll, describe, expect, it } from 'vitest'
import { resolveOptions } from '../../src/build/options'
import { createAuthContext } from '../../src/runtime/server/lib/context'
import type { AuthContext } from '../../src/runtime/server/lib/context'
import { consumeAuthCode, createAuthCode } from '../../src/runtime/server/lib/records/auth-code'
import { createMagicCode, discardMagicCode, verifyMagicCode } from '../../src/runtime/server/lib/records/magic-code'
import {
  issueRefreshToken,
  listUserSessions,
  readRefreshToken,
  revokeFamily,
  revokeRefreshToken,
  revokeUserSessions,
  useRefreshToken,
} from '../../src/runtime/server/lib/records/refresh-token'
import type { RefreshResult } from '../../src/runtime/server/lib/records/refresh-token'
import { RESET_SESSION_TTL, consumeResetSession, createResetSession, readResetSession } from '../../src/runtime/server/lib/records/reset-session'
import { storableUser, subjectOf } from '../../src/runtime/server/lib/records/user'
import type { AuthUser, ImpersonationContext, MagicCodeAction } from '../../src/runtime/types/auth'

const SECRET = 'records-test-secret-0123456789-abcdefghijkl'
const ENCRYPTION_KEY = 'records-encryption-key-0123456789-abcdefgh'
const EMAIL = 'zoe.marker@example.com'

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

const contexts: AuthContext[] = []
afterAll(async () => {
  await Promise.all(contexts.map(ctx => ctx.dispose()))
})

/** A fresh context on its own memory backend. */
async function makeContext({ encryption = false }: { encryption?: boolean } = {}): Promise<AuthContext> {
  const options = resolveOptions({
    token: { secret: SECRET },
    tokenRefresh: {
      storage: { driver: 'memory' },
      ...(encryption ? { encryption: { enabled: true, key: ENCRYPTION_KEY } } : {}),
    },
    logging: { level: 'silent' },
  }, true)
  const ctx = await createAuthContext(options, { dev: false })
  contexts.push(ctx)
  return ctx
}

/** Every live key and its stored (raw) value. */
async function dump(ctx: AuthContext): Promise<Array<[string, string]>> {
  const keys = await ctx.store.backend.keys('')
  return Promise.all(keys.map(async key => [key, (await ctx.store.backend.get(key)) ?? ''] as [string, string]))
}

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

  it('subjectOf prefers sub, then id', () => {
    expect(subjectOf({ sub: 's1', id: 'i1' })).toBe('s1')
    expect(subjectOf({ id: 'i1' })).toBe('i1')
    expect(subjectOf(JSON.parse('{"id":42}') as AuthUser)).toBe('42')
    expect(subjectOf({ sub: '' })).toBeUndefined()
    expect(subjectOf({ email: EMAIL })).toBeUndefined()
  })
})

describe('auth codes', () => {
  it('are single use', async () => {
    const ctx = await makeContext()
    const code = await createAuthCode(ctx, { user: user('u1', { hashedPassword: 'h' }), claims: { role: 'admin' }, provider: 'github', redirect: '/after' })
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
    const code = await createAuthCode(ctx, { user: user('u1'), claims: {} })
    const results = await Promise.all(Array.from({ length: 50 }, () => consumeAuthCode(ctx, code)))
    expect(count(results, r => r !== null)).toBe(1)
  })

  it('live for authCode.expiresIn seconds', async () => {
    const ctx = await makeContext()
    await createAuthCode(ctx, { user: user('u1'), claims: {} })
    const [[key]] = await dump(ctx) as [[string, string]]
    const ttl = await ctx.store.backend.ttl(key)
    expect(ttl).not.toBeNull()
    expect(ttl!).toBeLessThanOrEqual(60_000)
    expect(ttl!).toBeGreaterThan(55_000)
  })

  it.each([false, true])('storage never holds the raw code (encryption %s)', async (encryption) => {
    const ctx = await makeContext({ encryption })
    const code = await createAuthCode(ctx, { user: user('u1', { email: EMAIL, password: 'hunter2' }), claims: {} })
    const entries = await dump(ctx)
    expect(entries).toHaveLength(1)
    expectOpaqueKeys(entries)
    for (const [key, value] of entries) {
      expect(key).not.toContain(code)
      expect(value).not.toContain(code)
      expect(value).not.toContain('hunter2')
      if (encryption) expect(value).not.toContain(EMAIL)
      else expect(value).toContain(EMAIL)
    }
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
    expect(await listUserSessions(ctx, 'u1')).toEqual([record.family])
  })

  it('use rotates: a new token of the same family', async () => {
    const ctx = await makeContext({ encryption })
    const { token, record } = await issue(ctx)
    const result = await useRefreshToken(ctx, token)
    expect(result.status).toBe('ok')
    if (result.status !== 'ok') return
    expect(result.token).toBeDefined()
    expect(result.token).not.toBe(token)
    expect(result.record.family).toBe(record.family)
    expect(result.record.userId).toBe('u1')
    expect(result.record.claims).toEqual({ role: 'user' })
    expect(result.record.provider).toBe('password')
    expect((await readRefreshToken(ctx, result.token!))?.record.family).toBe(record.family)
    expect(await listUserSessions(ctx, 'u1')).toEqual([record.family])
    // The new token rotates in turn.
    const next = await useRefreshToken(ctx, result.token!)
    expect(next.status === 'ok' && next.token !== undefined && next.token !== result.token).toBe(true)
  })

  it('the old token within the grace period is ok without a new token', async () => {
    const ctx = await makeContext({ encryption })
    const { token, record } = await issue(ctx)
    const first = await useRefreshToken(ctx, token)
    expect(first.status === 'ok' && first.token).toBeTruthy()
    const again = await useRefreshToken(ctx, token)
    expect(again).toEqual({ status: 'ok', record, token: undefined })
    // Still within the grace period: the family stays live.
    const newest = first.status === 'ok' ? first.token! : ''
    expect(await readRefreshToken(ctx, newest)).not.toBeNull()
  })

  it('reuse after the grace period revokes the family: even the newest token is invalid', async () => {
    const ctx = await makeContext({ encryption })
    ctx.options.tokenRefresh.reuseGracePeriod = 0
    const { token, record } = await issue(ctx)
    const rotated = await useRefreshToken(ctx, token)
    expect(rotated.status === 'ok' && rotated.token).toBeTruthy()
    const newest = rotated.status === 'ok' ? rotated.token! : ''
    expect(await useRefreshToken(ctx, token)).toEqual({ status: 'reused', family: record.family, userId: 'u1' })
    expect(await useRefreshToken(ctx, newest)).toEqual({ status: 'invalid' })
    expect(await readRefreshToken(ctx, newest)).toBeNull()
    expect(await listUserSessions(ctx, 'u1')).toEqual([])
    // A second replay is just invalid (the family is already revoked).
    expect(await useRefreshToken(ctx, token)).toEqual({ status: 'invalid' })
  })

  it('reuse once a non-zero grace period has passed is detected', async () => {
    const ctx = await makeContext({ encryption })
    ctx.options.tokenRefresh.reuseGracePeriod = 1
    const { token, record } = await issue(ctx)
    const rotated = await useRefreshToken(ctx, token)
    const newest = rotated.status === 'ok' ? rotated.token : undefined
    expect(newest).toBeDefined()
    await sleep(1100)
    expect(await useRefreshToken(ctx, token)).toEqual({ status: 'reused', family: record.family, userId: 'u1' })
    expect(await useRefreshToken(ctx, newest!)).toEqual({ status: 'invalid' })
  })

  it('of 20 concurrent uses of one token exactly one rotates, the others are ok within the grace period', async () => {
    const ctx = await makeContext({ encryption })
    const { token, record } = await issue(ctx)
    const results: RefreshResult[] = await Promise.all(Array.from({ length: 20 }, () => useRefreshToken(ctx, token)))
    expect(count(results, r => r.status === 'reused')).toBe(0)
    expect(count(results, r => r.status === 'invalid')).toBe(0)
    const rotated = results.filter(r => r.status === 'ok' && r.token !== undefined)
    expect(rotated).toHaveLength(1)
    expect(count(results, r => r.status === 'ok' && r.token === undefined)).toBe(19)
    for (const r of results) expect(r.status === 'ok' && r.record.family).toBe(record.family)
    const winner = rotated[0]!
    const newest = winner.status === 'ok' ? winner.token! : ''
    expect(await readRefreshToken(ctx, newest)).not.toBeNull()
    expect(await listUserSessions(ctx, 'u1')).toEqual([record.family])
  })

  it('revokeRefreshToken makes the token invalid', async () => {
    const ctx = await makeContext({ encryption })
    const { token, record } = await issue(ctx)
    const revoked = await revokeRefreshToken(ctx, token)
    expect(revoked?.family).toBe(record.family)
    expect(await useRefreshToken(ctx, token)).toEqual({ status: 'invalid' })
    expect(await listUserSessions(ctx, 'u1')).toEqual([])
    expect(await revokeRefreshToken(ctx, token)).toBeNull()
    expect(await revokeRefreshToken(ctx, 'unknown')).toBeNull()
  })

  it('revoking a rotated token revokes the newest token of its family too', async () => {
    const ctx = await makeContext({ encryption })
    const { token } = await issue(ctx)
    const rotated = await useRefreshToken(ctx, token)
    const newest = rotated.status === 'ok' ? rotated.token! : ''
    await revokeRefreshToken(ctx, token)
    expect(await useRefreshToken(ctx, newest)).toEqual({ status: 'invalid' })
  })

  it('revokeFamily stops every token of the family', async () => {
    const ctx = await makeContext({ encryption })
    const a = await issue(ctx)
    const b = await issueRefreshToken(ctx, { family: a.record.family, user: user('u1'), userId: 'u1', claims: {} })
    await revokeFamily(ctx, a.record.family, 'u1')
    expect(await useRefreshToken(ctx, a.token)).toEqual({ status: 'invalid' })
    expect(await useRefreshToken(ctx, b.token)).toEqual({ status: 'invalid' })
  })

  it('revokeUserSessions revokes every family of that user and no other user\'s', async () => {
    const ctx = await makeContext({ encryption })
    const mine = await Promise.all([issue(ctx, 'alice'), issue(ctx, 'alice'), issue(ctx, 'alice')])
    const other = await issue(ctx, 'bob')
    expect((await listUserSessions(ctx, 'alice')).sort()).toEqual(mine.map(s => s.record.family).sort())
    expect(await revokeUserSessions(ctx, 'alice')).toBe(3)
    for (const s of mine) expect(await useRefreshToken(ctx, s.token)).toEqual({ status: 'invalid' })
    expect(await listUserSessions(ctx, 'alice')).toEqual([])
    expect(await listUserSessions(ctx, 'bob')).toEqual([other.record.family])
    const bob = await useRefreshToken(ctx, other.token)
    expect(bob.status === 'ok' && bob.token !== undefined).toBe(true)
    expect(await revokeUserSessions(ctx, 'nobody')).toBe(0)
  })

  it('revokeUserSessions with except keeps that family', async () => {
    const ctx = await makeContext({ encryption })
    const [keep, drop1, drop2] = await Promise.all([issue(ctx, 'alice'), issue(ctx, 'alice'), issue(ctx, 'alice')])
    expect(await revokeUserSessions(ctx, 'alice', { except: keep!.record.family })).toBe(2)
    expect(await listUserSessions(ctx, 'alice')).toEqual([keep!.record.family])
    expect(await useRefreshToken(ctx, drop1!.token)).toEqual({ status: 'invalid' })
    expect(await useRefreshToken(ctx, drop2!.token)).toEqual({ status: 'invalid' })
    const kept = await useRefreshToken(ctx, keep!.token)
    expect(kept.status === 'ok' && kept.token !== undefined).toBe(true)
  })

  it('listUserSessions lists the live families of one user', async () => {
    const ctx = await makeContext({ encryption })
    expect(await listUserSessions(ctx, 'alice')).toEqual([])
    const a = await issue(ctx, 'alice')
    const b = await issue(ctx, 'alice')
    await issue(ctx, 'alice-2')
    await issue(ctx, 'bob')
    expect((await listUserSessions(ctx, 'alice')).sort()).toEqual([a.record.family, b.record.family].sort())
    await revokeRefreshToken(ctx, a.token)
    expect(await listUserSessions(ctx, 'alice')).toEqual([b.record.family])
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
      const result = await useRefreshToken(ctx, token, rotate)
      expect(result.status).toBe('ok')
      if (result.status !== 'ok') return
      expect(result.token).toBeUndefined()
      expect(result.record.impersonation).toEqual(impersonation)
    }
    // A normal session under the same rule still rotates.
    const normal = await issue(ctx, 'u2')
    const rotated = await useRefreshToken(ctx, normal.token, rotate)
    expect(rotated.status === 'ok' && rotated.token !== undefined).toBe(true)
  })

  it('storage holds neither raw tokens nor secrets of the user', async () => {
    const ctx = await makeContext({ encryption })
    const { token } = await issue(ctx)
    const rotated = await useRefreshToken(ctx, token)
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
    const other = await createAuthContext(resolveOptions({
      token: { secret: SECRET },
      tokenRefresh: { storage: { driver: 'memory' }, encryption: { enabled: true, key: `${ENCRYPTION_KEY}-other` } },
      logging: { level: 'silent' },
    }, true), { dev: false })
    contexts.push(other)
    // Copy the stored entries over verbatim.
    for (const [key, value] of await dump(ctx)) await other.store.backend.set(key, value, 60_000)
    expect(await readRefreshToken(other, token)).toBeNull()
    expect(await useRefreshToken(other, token)).toEqual({ status: 'invalid' })
  })
})

describe('magic codes', () => {
  const verify = (ctx: AuthContext, code: string, extra: { email?: string, action?: MagicCodeAction, maxAttempts?: number } = {}) =>
    verifyMagicCode<{ hashedPassword?: string }>(ctx, { action: extra.action ?? 'login', code, email: extra.email, maxAttempts: extra.maxAttempts ?? 5, ttlSeconds: 600 })

  const create = (ctx: AuthContext, email = EMAIL, action: MagicCodeAction = 'login', ttlSeconds = 600) =>
    createMagicCode(ctx, { email, action, data: { hashedPassword: 'hash-of-password' }, ttlSeconds })

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
    const ttl = await ctx.store.backend.ttl(key)
    expect(ttl).not.toBeNull()
    expect(ttl!).toBeLessThanOrEqual(300_000)
    expect(ttl!).toBeGreaterThan(290_000)
  })
})
