import bcryptjs from 'bcryptjs'
import { afterAll, describe, expect, it } from 'vitest'
import { deleteRedisKeys } from '../support/redis-servers'
import { testRedisUrl } from '../support/test-redis'
import { restartApp, setupApp, type TestApp } from './app'
import type { Server } from './requests'
import { startServerProcess, type ServerProcess } from './server-processes'
import { compareTimings as compare, timingsWithin as within } from '../support/timing'
import { callbackCode, exchange, loginUser, nextCode, otherCode, PASSWORD, post, registerUser, sentCodes, uniqueEmail } from './password-helpers'

// Every test starts the server afresh (its own limits and counters).
await setupApp('password', {}, { server: false })

/** The server of this file, started again with `env` (and fresh counters). */
const start = (env: Record<string, string>): Promise<TestApp> => restartApp(env)

const others: ServerProcess[] = []
afterAll(() => Promise.all(others.map(s => s.stop())))

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms))

async function errorOf(res: Response): Promise<string> {
  return ((await res.json()) as { error: string }).error
}

async function expect429(res: Response, window: number) {
  expect(res.status).toBe(429)
  expect(await res.json()).toEqual({ statusCode: 429, message: 'Too many requests, try again later', error: 'rate_limited' })
  const retryAfter = Number(res.headers.get('retry-after'))
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(window)
}

/** Runs `fn` with the environment of a storage on the tests' Redis under a key prefix of its own, deleted afterwards. */
async function withRedisPrefix(label: string, fn: (env: Record<string, string>) => Promise<void>): Promise<void> {
  const prefix = `svc-auth-e2e-${label}:${process.pid}:${Date.now().toString(36)}:`
  try {
    await fn({ NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'redis', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL: testRedisUrl(), NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_PREFIX: prefix })
  }
  finally {
    await deleteRedisKeys(prefix)
  }
}

describe('code expiry', () => {
  it('refuses a code after magicCodeTTL seconds', async () => {
    const server = await start({ NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false', NUXT_SVC_AUTH_PROVIDERS_PASSWORD_MAGIC_CODE_TTL: '1' })
    const email = uniqueEmail('expiry')
    await post(server, '/auth/password/register', { email, password: PASSWORD })
    const code = await nextCode(server, email, 'register')
    await sleep(1300)
    const late = await server.fetch(`/auth/password/register-verify?code=${code}`)
    expect(late.status).toBe(400)
    expect(await errorOf(late)).toBe('invalid_verification_code')
    const lateByEmail = await post(server, '/auth/password/register-verify', { email, code }, { accept: 'application/json' })
    expect(await errorOf(lateByEmail)).toBe('invalid_verification_code')
    // A fresh code of the same server works at once.
    await post(server, '/auth/password/register', { email, password: PASSWORD })
    const fresh = await nextCode(server, email, 'register', 1)
    await exchange(server, callbackCode(await server.fetch(`/auth/password/register-verify?code=${fresh}`)))
  })
})

describe('enumeration by timing', () => {
  // Low bcrypt cost (8) in the fixture; a slow mail server (40 ms per delivery) on this server. The
  // leaks guarded against: one bcrypt hash at cost 8 without the dummy hash, the 40 ms delivery when
  // the reset code is sent before the answer (the comparison: test/support/timing.ts).
  it('login: unknown email and wrong password take the same time', async () => {
    const server = await start({ NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false', FIXTURE_SEND_DELAY_MS: '40' })
    const email = uniqueEmail('timing')
    await registerUser(server, email)
    const gap = await compare({
      a: () => post(server, '/auth/password/login', { email, password: 'Wrong-password-1' }),
      b: () => post(server, '/auth/password/login', { email: uniqueEmail('ghost'), password: 'Wrong-password-1' }),
    })
    expect(within(gap), JSON.stringify(gap)).toBe(true)
  })

  it('reset-request: existing and unknown accounts take the same time', async () => {
    const server = await start({ NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false', FIXTURE_SEND_DELAY_MS: '40' })
    const email = uniqueEmail('timing-reset')
    await registerUser(server, email)
    const gap = await compare({
      a: () => post(server, '/auth/password/reset-request', { email }),
      b: () => post(server, '/auth/password/reset-request', { email: uniqueEmail('ghost') }),
    })
    expect(within(gap), JSON.stringify(gap)).toBe(true)
    expect((await sentCodes(server, email, 'reset')).length).toBeGreaterThan(0)
  })
})

describe('rate limits', () => {
  const limited = {
    NUXT_SVC_AUTH_RATE_LIMIT_LOGIN_PER_IP: '4',
    NUXT_SVC_AUTH_RATE_LIMIT_LOGIN_PER_EMAIL: '6',
    NUXT_SVC_AUTH_RATE_LIMIT_VERIFY_PER_IP: '5',
    NUXT_SVC_AUTH_RATE_LIMIT_REGISTER_PER_IP: '3',
    NUXT_SVC_AUTH_RATE_LIMIT_RESET_REQUEST_PER_EMAIL: '2',
  }

  it('limits per client address; X-Forwarded-For is ignored without trusted proxies', async () => {
    const server = await start(limited)
    const login = (email: string, xff: string) => post(server, '/auth/password/login', { email, password: 'Wrong-password-1' }, { 'x-forwarded-for': xff })
    for (let i = 0; i < 4; i++) expect((await login(uniqueEmail(), `203.0.113.${i}`)).status).toBe(400)
    await expect429(await login(uniqueEmail(), '203.0.113.99'), 900)
    // Other endpoints have their own counters.
    for (let i = 0; i < 3; i++) expect((await post(server, '/auth/password/register', { email: 'bad', password: PASSWORD })).status).toBe(400)
    await expect429(await post(server, '/auth/password/register', { email: uniqueEmail(), password: PASSWORD }), 3600)
  })

  it('limits per email and per address behind a trusted proxy, and the verify endpoints per address', async () => {
    const server = await start({ ...limited, NUXT_SVC_AUTH_RATE_LIMIT_TRUSTED_PROXIES: '["127.0.0.1", "::1"]' })
    const login = (email: string, xff: string) => post(server, '/auth/password/login', { email, password: 'Wrong-password-1' }, { 'x-forwarded-for': xff })

    // Per address: the client behind the proxy, not the proxy.
    for (let i = 0; i < 4; i++) expect((await login(uniqueEmail(), '198.51.100.1')).status).toBe(400)
    await expect429(await login(uniqueEmail(), '198.51.100.1'), 900)
    // A forged entry left of the real client changes nothing: the right-most untrusted one counts.
    await expect429(await login(uniqueEmail(), '10.9.8.7, 198.51.100.1'), 900)
    expect((await login(uniqueEmail(), '198.51.100.2')).status).toBe(400)

    // Per email: from many addresses, one email is limited after 6 requests in the window.
    const victim = uniqueEmail('victim')
    for (let i = 0; i < 6; i++) expect((await login(victim, `192.0.2.${i + 10}`)).status).toBe(400)
    await expect429(await login(victim, '192.0.2.200'), 900)
    await expect429(await login(` ${victim.toUpperCase()} `, '192.0.2.201'), 900)

    // Verify endpoints share a per-address limit (every request counts, whatever the code).
    const verify = (code: string, xff: string) => server.fetch(`/auth/password/login-verify?code=${code}`, { headers: { 'x-forwarded-for': xff } })
    for (let i = 0; i < 5; i++) expect((await verify(String(100000 + i), '198.51.100.50')).status).toBe(400)
    await expect429(await verify('100005', '198.51.100.50'), 900)
    await expect429(await post(server, '/auth/password/register-verify', { code: '123456' }, { 'x-forwarded-for': '198.51.100.50' }), 900)
    expect((await verify('100006', '198.51.100.51')).status).toBe(400)

    // reset-request: per email, the same success answer until the limit.
    const email = uniqueEmail('reset-limit')
    for (let i = 0; i < 2; i++) expect((await post(server, '/auth/password/reset-request', { email }, { 'x-forwarded-for': `192.0.2.${i + 50}` })).status).toBe(200)
    await expect429(await post(server, '/auth/password/reset-request', { email }, { 'x-forwarded-for': '192.0.2.60' }), 3600)
  })

  it('a right code is refused too once the address is limited', async () => {
    const server = await start({ NUXT_SVC_AUTH_RATE_LIMIT_VERIFY_PER_IP: '3' })
    const email = uniqueEmail('verify-limit')
    await post(server, '/auth/password/register', { email, password: PASSWORD })
    const code = await nextCode(server, email, 'register')
    for (let i = 1; i <= 3; i++) expect((await server.fetch(`/auth/password/register-verify?code=${otherCode(code, i)}`)).status).toBe(400)
    expect((await server.fetch(`/auth/password/register-verify?code=${code}`)).status).toBe(429)
  })

  it('can be switched off', async () => {
    const server = await start({ ...limited, NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false' })
    const email = uniqueEmail()
    for (let i = 0; i < 12; i++) expect((await post(server, '/auth/password/login', { email, password: 'Wrong-password-1' })).status).toBe(400)
  })

  it('hold across server instances sharing Redis', async () => {
    await withRedisPrefix('pw', async (redisEnv) => {
      // The app of this file and a second process on the same Redis.
      const env = { ...redisEnv, NUXT_SVC_AUTH_RATE_LIMIT_LOGIN_PER_EMAIL: '3' }
      const [a, b] = await Promise.all([start(env), startServerProcess(env, 'password')])
      others.push(b)
      const email = uniqueEmail('shared')
      const statuses: number[] = []
      for (const server of [a, b, a, b]) statuses.push((await post(server, '/auth/password/login', { email, password: 'Wrong-password-1' })).status)
      expect(statuses).toEqual([400, 400, 400, 429])

      // A code issued by one instance is verified by the other, and its attempts are shared.
      const user = uniqueEmail('shared-code')
      await post(a, '/auth/password/register', { email: user, password: PASSWORD })
      const code = await nextCode(a, user, 'register')
      for (const server of [b, a, b, a]) expect((await post(server, '/auth/password/register-verify', { email: user, code: otherCode(code) }, { accept: 'application/json' })).status).toBe(400)
      const last = await post(b, '/auth/password/register-verify', { email: user, code: otherCode(code) }, { accept: 'application/json' })
      expect(await errorOf(last)).toBe('too_many_attempts')
      expect(await errorOf(await a.fetch(`/auth/password/register-verify?code=${code}`))).toBe('too_many_attempts')
    })
  })
})

/** Behind a trusted proxy on loopback: each request's client address is its X-Forwarded-For. */
const PROXIED = { NUXT_SVC_AUTH_RATE_LIMIT_TRUSTED_PROXIES: '["127.0.0.1", "::1"]' }

describe('verification failures per email', () => {
  it('wrong codes for one email from many addresses, across codes, end in 429, the right code included', async () => {
    const server = await start({ ...PROXIED, NUXT_SVC_AUTH_RATE_LIMIT_VERIFY_FAILURES_PER_EMAIL: '6' })
    const email = uniqueEmail('verify-failures')
    const verify = (code: string, address: string) => post(server, '/auth/password/register-verify', { email, code }, { 'accept': 'application/json', 'x-forwarded-for': address })
    let address = 0
    const next = () => `198.51.100.${++address}`
    // Four misses on the first code (under its 5 attempts), two on a second one: the email's
    // failures count across codes.
    await post(server, '/auth/password/register', { email, password: PASSWORD }, { 'x-forwarded-for': next() })
    const first = await nextCode(server, email, 'register')
    for (let i = 1; i <= 4; i++) expect(await errorOf(await verify(otherCode(first, i), next()))).toBe('invalid_verification_code')
    await post(server, '/auth/password/register', { email, password: PASSWORD }, { 'x-forwarded-for': next() })
    const second = await nextCode(server, email, 'register', 1)
    for (let i = 1; i <= 2; i++) expect(await errorOf(await verify(otherCode(second, i), next()))).toBe('invalid_verification_code')
    // The seventh failure of the email is refused, and so is the right second code, which has had
    // only three attempts.
    await expect429(await verify(otherCode(second, 3), next()), 86400)
    await expect429(await verify(second, next()), 86400)
  })
})

describe('distributed guessing against one account', () => {
  const WRONG = 'Wrong-password-1'
  const attempt = (server: Server, email: string, password: string, address: string, cookie = '') =>
    post(server, '/auth/password/login', { email, password }, { 'x-forwarded-for': address, ...(cookie ? { cookie } : {}) })

  /** The rest of a login whose password step answered 200: the emailed code, then the token exchange. */
  async function finishLogin(server: Server, email: string, seen: number) {
    const code = await nextCode(server, email, 'login', seen)
    return exchange(server, callbackCode(await server.fetch(`/auth/password/login-verify?code=${code}`)))
  }

  it('21 addresses × 5 wrong passwords lock the email for browsers without a device cookie, never the owner\'s browser', async () => {
    const server = await start(PROXIED)
    const owner = uniqueEmail('owner')
    await registerUser(server, owner)
    // The owner's browser completes a login and keeps its device cookie.
    const { deviceCookie } = await loginUser(server, owner)
    expect(deviceCookie).toMatch(/^(?:__Host-)?svc-device=[\w.-]+$/)

    // Strangers: 5 wrong passwords from each of 21 addresses (the defaults: 5 per email and
    // address, 100 per email in 15 minutes). The last address finds the email locked.
    const statuses: number[] = []
    for (let a = 0; a < 21; a++) {
      for (let i = 0; i < 5; i++) statuses.push((await attempt(server, owner, WRONG, `203.0.113.${a}`)).status)
    }
    expect(statuses.slice(0, 100).filter(s => s !== 400)).toEqual([])
    expect(statuses.slice(100)).toEqual([429, 429, 429, 429, 429])

    // Without a device cookie the right password is refused, also from the owner's own address.
    await expect429(await attempt(server, owner, PASSWORD, '192.0.2.1'), 900)
    // The owner's browser logs in from that address, and gets a new device cookie.
    let seen = (await sentCodes(server, owner, 'login')).length
    expect((await attempt(server, owner, PASSWORD, '192.0.2.1', deviceCookie)).status).toBe(200)
    const renewed = (await finishLogin(server, owner, seen)).deviceCookie
    expect(renewed).toMatch(/^(?:__Host-)?svc-device=/)
    expect(renewed).not.toBe(deviceCookie)

    // Neither another account's device cookie nor an altered one counts.
    const { deviceCookie: otherAccount } = await registerUser(server, uniqueEmail('other'))
    await expect429(await attempt(server, owner, PASSWORD, '192.0.2.1', otherAccount), 900)
    const altered = renewed.replace(/.$/, c => (c === '0' ? '1' : '0'))
    await expect429(await attempt(server, owner, PASSWORD, '192.0.2.1', altered), 900)

    // A device cookie does not lift the limit on its own guesses: 5 failures per window, from any
    // addresses, then even the right password is refused for it.
    for (let i = 0; i < 5; i++) expect((await attempt(server, owner, WRONG, `198.51.100.${i}`, renewed)).status).toBe(400)
    await expect429(await attempt(server, owner, PASSWORD, '198.51.100.99', renewed), 900)
    // The owner's other known browser is not affected.
    seen = (await sentCodes(server, owner, 'login')).length
    expect((await attempt(server, owner, PASSWORD, '192.0.2.1', deviceCookie)).status).toBe(200)
    expect(await nextCode(server, owner, 'login', seen)).toMatch(/^\d{6}$/)
  })

  it('two server processes sharing Redis honour each other\'s device cookies and share the counters', async () => {
    await withRedisPrefix('device', async (redisEnv) => {
      const env = { ...redisEnv, ...PROXIED, NUXT_SVC_AUTH_RATE_LIMIT_LOGIN_PER_EMAIL: '4' }
      const [a, b] = await Promise.all([start(env), startServerProcess(env, 'password')])
      others.push(b)
      // One account in the host's user store of both processes; its owner logs in on a.
      const owner = uniqueEmail('shared-owner')
      const hashedPassword = bcryptjs.hashSync(PASSWORD, 8)
      for (const server of [a, b]) expect((await post(server, '/api/test/users', { email: owner, hashedPassword })).status).toBe(200)
      const { deviceCookie } = await loginUser(a, owner)
      expect(deviceCookie).not.toBe('')

      // Strangers' failures on both processes count against one per-email limit.
      const statuses: number[] = []
      for (const [i, server] of [a, b, a, b, a, b].entries()) statuses.push((await attempt(server, owner, WRONG, `203.0.113.${i}`)).status)
      expect(statuses).toEqual([400, 400, 400, 400, 429, 429])
      await expect429(await attempt(b, owner, PASSWORD, '192.0.2.1'), 900)
      // The device cookie issued by a is honoured by b.
      const seen = (await sentCodes(b, owner, 'login')).length
      expect((await attempt(b, owner, PASSWORD, '192.0.2.1', deviceCookie)).status).toBe(200)
      expect(await nextCode(b, owner, 'login', seen)).toMatch(/^\d{6}$/)

      // The device cookie's own failures are counted once for both processes.
      const own: number[] = []
      for (const [i, server] of [a, b, a, b, a, b].entries()) own.push((await attempt(server, owner, WRONG, `198.51.100.${i}`, deviceCookie)).status)
      expect(own).toEqual([400, 400, 400, 400, 400, 429])
      await expect429(await attempt(a, owner, PASSWORD, '198.51.100.99', deviceCookie), 900)
    })
  })
})
