import type { Server } from 'node:http'
import type { H3Event } from 'h3'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { CookieJar } from '../helpers/cookie-jar'
import { resolveOptions } from '../../src/build/resolve-options'
import type { AuthContext } from '../../src/runtime/server/lib/core/context'
import { deviceCookieName, issueDeviceCookie, trustedDevice } from '../../src/runtime/server/lib/edge/device-cookie'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { validateRateLimitOptions } from '../../src/runtime/server/lib/config/validate-options'
import { passwordRoutePath } from '../../src/runtime/password/password-paths'
import { reserveLoginFailure } from '../../src/runtime/server/lib/edge/rate-limit'
import { createAuthCode } from '../../src/runtime/server/lib/core/records/auth-code'
import { peekAuthContext } from '../../src/runtime/server/utils/auth-context'
import type { ModuleOptions } from '../../src/runtime/types/options'
import type { LoginRateLimitRule } from '../../src/runtime/types/rate-limit-options'
import { unitContext } from './helpers/context'
import { fakeEvent, setCookies, setCookieValue } from './helpers/event'
import { memoryPasswordAccounts, serveModule } from './helpers/module-router'

/** A password login's reservation, as the login flow makes it: with the browser's device cookie for the email. */
const reserve = (ctx: AuthContext, event: H3Event, email: string) => reserveLoginFailure(ctx, event, email, trustedDevice(event, ctx, email))

// The module's real endpoints on a plain h3 app (Nitro's runtime is mocked: the options, the hooks).
const nitro = vi.hoisted(() => ({ options: undefined as unknown }))
vi.mock('nitropack/runtime', () => ({
  useRuntimeConfig: () => ({ svcAuth: nitro.options }),
  useNitroApp: () => ({ hooks: { callHook: async () => {} } }),
}))

const OWNER = 'owner@example.com'
const SECRET = 'device-cookie-unit-secret-0123456789-abcd'
const ROTATED = 'device-cookie-unit-secret-rotated-0123456'
const YEAR = 31_536_000

afterEach(() => {
  vi.useRealTimers()
})

/** A context with rate limits on and `login` over its defaults. */
function withLogin(login: Partial<LoginRateLimitRule> = {}, secrets: { secret: string, previousSecrets?: string[] } = { secret: SECRET }): Promise<AuthContext> {
  const defaults = resolveOptions({}, true)
  // Security events are logged (to nowhere: the level is silent), so tests can watch `logger.security`.
  return unitContext({ token: secrets, logging: { level: 'silent', security: true }, rateLimit: { ...defaults.rateLimit, login: { ...defaults.rateLimit.login, ...login } } })
}

/** The value of the device cookie a fresh response sets for `email`. */
function issued(ctx: AuthContext, email = OWNER): string {
  const event = fakeEvent()
  issueDeviceCookie(event, ctx, email)
  return setCookieValue(event, deviceCookieName(ctx)) ?? ''
}

/** A login request from `address`, carrying the device cookie `value` when given. */
function attempt(ctx: AuthContext, address: string, value?: string) {
  return fakeEvent({ method: 'POST', remoteAddress: address, headers: value === undefined ? {} : { cookie: `${deviceCookieName(ctx)}=${value}` } })
}

describe('the device cookie', () => {
  it('is HttpOnly, SameSite=Lax, Secure with the __Host- prefix on path /, lives deviceCookieMaxAge, and holds no email', async () => {
    const ctx = await withLogin()
    const event = fakeEvent()
    const before = Math.floor(Date.now() / 1000)
    issueDeviceCookie(event, ctx, OWNER)
    const [line, ...more] = setCookies(event)
    expect(more).toEqual([])
    expect(line).toMatch(/^__Host-svc-device=[\w-]{22}\.\d+\.[0-9a-f]{64}; /)
    expect(line!.split('; ').slice(1).sort()).toEqual(['HttpOnly', `Max-Age=${YEAR}`, 'Path=/', 'SameSite=Lax', 'Secure'])
    const [nonce, expires] = setCookieValue(event, '__Host-svc-device')!.split('.')
    expect(Number(expires) - before).toBeGreaterThanOrEqual(YEAR)
    expect(Number(expires) - before).toBeLessThanOrEqual(YEAR + 2)
    expect(line).not.toMatch(/owner|example/i)
    // A new nonce for every login.
    expect(issued(ctx).split('.')[0]).not.toBe(nonce)
  })

  it('has no prefix and no Secure where cookies are not Secure', async () => {
    const ctx = await unitContext({ token: { secret: SECRET }, tokenRefresh: { storage: { driver: 'memory' }, cookie: { ...resolveOptions({}, true).tokenRefresh.cookie, secure: false } } })
    const event = fakeEvent()
    issueDeviceCookie(event, ctx, OWNER)
    expect(deviceCookieName(ctx)).toBe('svc-device')
    expect(setCookies(event)[0]).toMatch(/^svc-device=.+; HttpOnly; SameSite=Lax$/)
    expect(setCookies(event)[0]).not.toContain('Secure')
  })

  it('is valid for the account it was issued for only (its canonical email)', async () => {
    const ctx = await withLogin()
    const value = issued(ctx, ' Owner@EXAMPLE.com ')
    expect(trustedDevice(attempt(ctx, '192.0.2.1', value), ctx, OWNER)).toBe(value.split('.')[0])
    expect(trustedDevice(attempt(ctx, '192.0.2.1', value), ctx, 'other@example.com')).toBeUndefined()
    expect(trustedDevice(attempt(ctx, '192.0.2.1'), ctx, OWNER)).toBeUndefined()
    // Not under another cookie name (the unprefixed name of a Secure deployment).
    expect(trustedDevice(fakeEvent({ headers: { cookie: `svc-device=${value}` } }), ctx, OWNER)).toBeUndefined()
  })

  it('is refused when any part is altered, when it has expired, or when it is malformed', async () => {
    const ctx = await withLogin()
    const value = issued(ctx)
    const [nonce, expires, signature] = value.split('.') as [string, string, string]
    const flip = (s: string, i: number) => `${s.slice(0, i)}${s[i] === 'a' ? 'b' : 'a'}${s.slice(i + 1)}`
    const altered = [
      `${flip(nonce, 0)}.${expires}.${signature}`,
      `${nonce}.${Number(expires) + 1}.${signature}`,
      `${nonce}.${Number(expires) + YEAR}.${signature}`,
      `${nonce}.${expires}.${flip(signature, 63)}`,
      `${nonce}.${expires}.${signature.toUpperCase()}`,
      `${nonce}.${expires}.${signature}0`,
      `${nonce}.${expires}`,
      `${nonce}..${signature}`,
      '',
      'x'.repeat(4096),
    ]
    for (const bad of altered) expect(trustedDevice(attempt(ctx, '192.0.2.1', bad), ctx, OWNER), bad).toBeUndefined()
    expect(trustedDevice(attempt(ctx, '192.0.2.1', value), ctx, OWNER)).toBe(nonce)
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Number(expires) * 1000 + 1)
    expect(trustedDevice(attempt(ctx, '192.0.2.1', value), ctx, OWNER)).toBeUndefined()
  })

  it('stays valid after a key rotation while the old secret is among previousSecrets', async () => {
    const value = issued(await withLogin())
    const rotated = await withLogin({}, { secret: ROTATED, previousSecrets: [SECRET] })
    expect(trustedDevice(attempt(rotated, '192.0.2.1', value), rotated, OWNER)).toBe(value.split('.')[0])
    const dropped = await withLogin({}, { secret: ROTATED })
    expect(trustedDevice(attempt(dropped, '192.0.2.1', value), dropped, OWNER)).toBeUndefined()
    // Issued under the new secret, it is valid there (and not where only the old one is known).
    const fresh = issued(rotated)
    expect(trustedDevice(attempt(dropped, '192.0.2.1', fresh), dropped, OWNER)).toBe(fresh.split('.')[0])
    const old = await withLogin()
    expect(trustedDevice(attempt(old, '192.0.2.1', fresh), old, OWNER)).toBeUndefined()
  })

  it('is neither issued nor honoured with rate limits off, deviceCookieMaxAge 0 or perEmailAndIp 0', async () => {
    const value = issued(await withLogin())
    const off = [
      await unitContext({ token: { secret: SECRET }, rateLimit: { ...resolveOptions({}, true).rateLimit, enabled: false } }),
      await withLogin({ deviceCookieMaxAge: 0 }),
      await withLogin({ perEmailAndIp: 0 }),
    ]
    for (const ctx of off) {
      expect(issued(ctx)).toBe('')
      expect(trustedDevice(attempt(ctx, '192.0.2.1', value), ctx, OWNER)).toBeUndefined()
    }
  })

  it('lifetime is validated: a duration from 0 to 400 days', () => {
    const limits = resolveOptions({}, true).rateLimit
    expect(limits.login.deviceCookieMaxAge).toBe(YEAR)
    expect(validateRateLimitOptions(limits)).toEqual([])
    for (const ok of [0, 1, 1.5, '3600', '400d']) expect(validateRateLimitOptions({ ...limits, login: { ...limits.login, deviceCookieMaxAge: ok } })).toEqual([])
    for (const bad of [-1, 400 * 86400 + 1, 'soon']) {
      expect(validateRateLimitOptions({ ...limits, login: { ...limits.login, deviceCookieMaxAge: bad } })).toEqual([
        `svcAuth.rateLimit.login.deviceCookieMaxAge must be a number of seconds from 0 to 34560000 or a duration such as '1h' (got ${JSON.stringify(bad)}).`,
      ])
    }
  })
})

describe('login failures with and without a device cookie', () => {
  const login = { perIp: 100, perEmailAndIp: 3, perEmail: 5, window: 60 }

  it('strangers on many addresses lock the email for clients without a device cookie, never for the owner\'s browser', async () => {
    const ctx = await withLogin(login)
    const device = issued(ctx)
    const security = vi.spyOn(ctx.logger, 'security')
    for (let i = 0; i < 5; i++) await reserve(ctx, attempt(ctx, `203.0.113.${i}`), OWNER)
    // Without a device cookie: refused, also from the owner's address; with one for another
    // account, or an altered one, too.
    await expect(reserve(ctx, attempt(ctx, '192.0.2.1'), OWNER)).rejects.toMatchObject({ statusCode: 429, data: { code: 'rate_limited' } })
    expect(security).toHaveBeenLastCalledWith('rate_limited', expect.objectContaining({ outcome: 'failure', details: { rule: 'login', per: 'email' } }))
    await expect(reserve(ctx, attempt(ctx, '192.0.2.1', issued(ctx, 'other@example.com')), OWNER)).rejects.toMatchObject({ statusCode: 429 })
    await expect(reserve(ctx, attempt(ctx, '192.0.2.1', device.replace(/.$/, c => (c === '0' ? '1' : '0'))), OWNER)).rejects.toMatchObject({ statusCode: 429 })
    // The owner's browser is evaluated, as often as it likes when the password is right.
    for (let i = 0; i < 10; i++) await (await reserve(ctx, attempt(ctx, '192.0.2.1', device), OWNER)).release()
  })

  it('a device cookie\'s own failures are bounded per cookie, across addresses and concurrent attempts', async () => {
    const ctx = await withLogin(login)
    const device = issued(ctx)
    const security = vi.spyOn(ctx.logger, 'security')
    const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => reserve(ctx, attempt(ctx, `198.51.100.${i}`, device), OWNER)))
    expect(results.filter(r => r.status === 'fulfilled')).toHaveLength(3)
    expect(results.filter(r => r.status === 'rejected').every(r => (r as PromiseRejectedResult).reason.statusCode === 429)).toBe(true)
    expect(security).toHaveBeenCalledWith('rate_limited', expect.objectContaining({ details: { rule: 'login', per: 'device' } }))
    // Locked: even a right password is not evaluated for that cookie, from anywhere.
    await expect(reserve(ctx, attempt(ctx, '198.51.100.200', device), OWNER)).rejects.toMatchObject({ statusCode: 429 })
    // The owner's other browser and clients without a cookie have their own counters.
    await (await reserve(ctx, attempt(ctx, '198.51.100.201', issued(ctx)), OWNER)).release()
    for (let i = 0; i < 5; i++) await reserve(ctx, attempt(ctx, `203.0.113.${i}`), OWNER)
    await expect(reserve(ctx, attempt(ctx, '203.0.113.99'), OWNER)).rejects.toMatchObject({ statusCode: 429 })
  })

  it('per email and address still holds with a device cookie', async () => {
    const ctx = await withLogin({ ...login, perEmailAndIp: 3 })
    const device = issued(ctx)
    for (let i = 0; i < 3; i++) await reserve(ctx, attempt(ctx, '192.0.2.1'), OWNER)
    await expect(reserve(ctx, attempt(ctx, '192.0.2.1', device), OWNER)).rejects.toMatchObject({ statusCode: 429 })
  })
})

describe('the token exchange', () => {
  const PASSWORD = 'Sunflower-42x'
  const { codes: mails, handlers: passwordAccounts } = memoryPasswordAccounts()
  let options: ModuleOptions
  let server: Server
  let base = ''

  beforeAll(async () => {
    options = resolveOptions({
      token: { secret: SECRET },
      tokenRefresh: { storage: { driver: 'memory' } },
      logging: { level: 'silent' },
      rateLimit: { trustedProxies: ['127.0.0.1'], login: { perIp: 100, perEmailAndIp: 3, perEmail: 4, window: 900, deviceCookieMaxAge: 3600 } },
      providers: { password: { passwordHashRounds: 4 } },
    }, true)
    nitro.options = options
    defineAuthHandlers({
      password: passwordAccounts,
    })
    const served = await serveModule(options)
    server = served.server
    base = served.base
  })

  afterAll(async () => {
    resetAuthHandlers()
    await new Promise(resolve => server?.close(resolve))
    await peekAuthContext()?.dispose()
  })

  /** A browser: its cookie jar, and JSON posts from a client address. */
  function browser() {
    const jar = new CookieJar()
    const post = async (path: string, body: unknown, address = '192.0.2.1') => {
      const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'accept': 'application/json', 'content-type': 'application/json', 'x-forwarded-for': address, 'cookie': jar.header() }, body: JSON.stringify(body), redirect: 'manual' })
      jar.store(res)
      return res
    }
    return { jar, post }
  }
  const password = (path: string) => passwordRoutePath(options.endpoints.authPath, path)
  const codeOf = (redirect: string) => new URL(redirect, base).searchParams.get('code')!

  it('of a password login gives the browser a device cookie that keeps it out of the email\'s lockout', async () => {
    const owner = browser()
    expect((await owner.post(password('register'), { email: OWNER, password: PASSWORD })).status).toBe(200)
    const verified = await owner.post(password('register-verify'), { email: OWNER, code: mails.at(-1)!.code })
    const { redirect } = await verified.json() as { redirect: string }
    // Verifying the code is not the end of the login: the exchange is.
    expect(owner.jar.has('__Host-svc-device')).toBe(false)
    expect((await owner.post(options.endpoints.tokenPath, { code: codeOf(redirect) })).status).toBe(200)
    expect(owner.jar.get('__Host-svc-device')).toMatch(/^[\w-]{22}\.\d+\.[0-9a-f]{64}$/)

    const stranger = browser()
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) statuses.push((await stranger.post(password('login'), { email: OWNER, password: 'Wrong-password-1' }, `203.0.113.${i}`)).status)
    expect(statuses).toEqual([400, 400, 400, 400, 429])
    const refused = await browser().post(password('login'), { email: OWNER, password: PASSWORD })
    expect(refused.status).toBe(429)
    expect(await refused.json()).toEqual({ statusCode: 429, message: 'Too many requests, try again later', error: 'rate_limited' })
    expect((await owner.post(password('login'), { email: OWNER, password: PASSWORD })).status).toBe(200)
  })

  it('of a login by another provider sets no device cookie', async () => {
    const ctx = peekAuthContext()!
    const code = await createAuthCode(ctx, fakeEvent(), { user: { sub: 'mock:1', email: OWNER }, claims: {}, provider: 'mock' }, { bindToBrowser: false })
    const b = browser()
    expect((await b.post(options.endpoints.tokenPath, { code })).status).toBe(200)
    expect([...b.jar.keys()].filter(name => name.includes('device'))).toEqual([])
  })
})
