import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import type { Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Secret, TOTP } from 'otpauth'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { CookieJar } from '../helpers/cookie-jar'
import { resolveOptions } from '../../src/build/resolve-options'
import { buildRuntimeConfig } from '../../src/build/runtime-config'
import { createAuthContext } from '../../src/runtime/server/lib/core/context'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { completeLogin } from '../../src/runtime/server/lib/core/login'
import { memoryPasswordAccounts, serveModule } from './helpers/module-router'
import { passwordRoutePath } from '../../src/runtime/password/password-paths'
import { checkSecondFactor } from '../../src/runtime/two-factor/server/code-check'
import { codeAt, hashRecoveryCode, matchTimeStep, newRecoveryCodes, secretBox } from '../../src/runtime/two-factor/server/secret'
import { newState } from '../../src/runtime/two-factor/server/two-factor-state'
import type { StoreBackend } from '../../src/runtime/server/lib/store/types'
import { peekAuthContext } from '../../src/runtime/server/utils/auth-context'
import type { TwoFactorState } from '../../src/runtime/types/auth'
import type { ModuleOptions, ModuleOptionsInput } from '../../src/runtime/types/options'
import { fakeEvent, setCookies } from './helpers/event'
import { deleteRedisKeys } from '../support/redis-servers'
import { testRedisUrl } from '../support/test-redis'
import { features } from './helpers/features'

// The module's real endpoints on a plain h3 app (Nitro's runtime is mocked: the options, the hooks).
const nitro = vi.hoisted(() => ({ options: undefined as unknown, base: '', hooks: [] as Array<{ name: string, payload: Record<string, unknown> }>, failHook: '' }))
vi.mock('nitropack/runtime', () => ({
  useRuntimeConfig: () => ({ svcAuth: nitro.options }),
  useNitroApp: () => ({
    hooks: {
      callHook: async (name: string, payload: Record<string, unknown>) => {
        nitro.hooks.push({ name, payload })
        if (name === nitro.failHook) throw new Error(`${name} failed on purpose`)
      },
    },
    localFetch: (path: string, init: RequestInit) => fetch(`${nitro.base}${path}`, init),
  }),
}))

// Every memory backend made, kept to look at what is really stored.
const storage = vi.hoisted(() => ({ backends: [] as StoreBackend[] }))
vi.mock('../../src/runtime/server/lib/store/memory', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/runtime/server/lib/store/memory')>()
  return {
    createMemoryBackend: (): StoreBackend => {
      const backend = original.createMemoryBackend()
      storage.backends.push(backend)
      return backend
    },
  }
})

const SECRET = 'two-factor-unit-secret-0123456789-abcdefgh'
const PASSWORD = 'Sunflower-42x'
const MAX_FAILURES = 12

let server: Server
let base = ''
let options: ModuleOptions
const { codes: mails, handlers: passwordAccounts } = memoryPasswordAccounts()
const states = new Map<string, TwoFactorState>()
const saves: Array<{ userId: string, reason: string }> = []
const logs: string[] = []
let required: ((user: { sub?: string }) => boolean) | undefined

/** One browser: its cookies, and requests to the app. */
function browser() {
  const jar = new CookieJar()
  const request = async (method: string, path: string, { body, bearer, headers: extra = {}, raw }: { body?: unknown, bearer?: string, headers?: Record<string, string>, raw?: string } = {}) => {
    const headers: Record<string, string> = { accept: 'application/json', cookie: jar.header(), ...extra }
    if (body !== undefined || raw !== undefined) headers['content-type'] ??= 'application/json'
    if (bearer) headers.authorization = `Bearer ${bearer}`
    const res = await fetch(`${base}${path}`, { method, headers, body: raw ?? (body === undefined ? undefined : JSON.stringify(body)), redirect: 'manual' })
    jar.store(res)
    return res
  }
  return {
    get: (path: string, bearer?: string) => request('GET', path, { bearer }),
    post: (path: string, body?: unknown, bearer?: string, headers?: Record<string, string>) => request('POST', path, { body: body ?? {}, bearer, headers }),
    raw: (path: string, raw: string) => request('POST', path, { raw }),
  }
}
type Browser = ReturnType<typeof browser>

const json = async <T>(res: Response, status = 200): Promise<T> => {
  const body = await res.json() as T
  expect(res.status, JSON.stringify(body)).toBe(status)
  return body
}
const errorOf = async (res: Response, status: number, error: string) => {
  const body = await json<{ statusCode: number, message: string, error: string }>(res, status)
  expect(body).toEqual({ statusCode: status, message: expect.any(String), error })
  return body
}

const password = (path: string) => passwordRoutePath(options.endpoints.authPath, path)
const twoFactor = (path: string) => `${options.endpoints.authPath}/two-factor/${path}`
const flowOf = (redirect: string) => new URL(redirect, base).searchParams.get('flow')!
const codeOf = (redirect: string) => new URL(redirect, base).searchParams.get('code')!

async function exchange(b: Browser, code: string): Promise<{ accessToken: string, sub: string }> {
  const { accessToken } = await json<{ accessToken: string }>(await b.post(options.endpoints.tokenPath, { code }))
  const sub = JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()).sub as string
  return { accessToken, sub }
}

let counter = 0
/** A registered password account and its access token. */
async function account(): Promise<{ email: string, token: string, sub: string }> {
  const email = `user-${counter++}@example.com`
  const b = browser()
  await json(await b.post(password('register'), { email, password: PASSWORD }))
  const done = await json<{ redirect: string }>(await b.post(password('register-verify'), { code: mails.at(-1)!.code, email }))
  const { accessToken, sub } = await exchange(b, codeOf(done.redirect))
  return { email, token: accessToken, sub }
}

/** The first factor of a password login in a fresh browser: where it went next. */
async function firstFactor(email: string, b: Browser = browser()): Promise<{ b: Browser, redirect: string }> {
  await json(await b.post(password('login'), { email, password: PASSWORD }))
  const { redirect } = await json<{ redirect: string }>(await b.post(password('login-verify'), { code: mails.filter(m => m.action === 'login').at(-1)!.code, email }))
  return { b, redirect }
}

const totp = (secret: string, timestamp = Date.now()) => new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp })
const PERIOD_MS = 30_000

/** Enrols an account through the settings routes; its secret and recovery codes. */
async function enrol(token: string): Promise<{ secret: string, uri: string, recoveryCodes: string[] }> {
  const b = browser()
  const { secret, uri } = await json<{ secret: string, uri: string }>(await b.post(twoFactor('enrol'), {}, token))
  const { recoveryCodes } = await json<{ recoveryCodes: string[] }>(await b.post(twoFactor('confirm'), { code: totp(secret, Date.now() - PERIOD_MS) }, token))
  return { secret, uri, recoveryCodes }
}

/**
 * A code of `secret` from a time step of the window not used before by this secret: `enrol`
 * confirms with the previous step's code, so the next two codes are those of the next step and of
 * the current one.
 */
const used = new Map<string, number>()
const unusedCode = (secret: string) => {
  const n = used.get(secret) ?? 0
  used.set(secret, n + 1)
  return totp(secret, Date.now() + [1, 0][n % 2]! * PERIOD_MS)
}

async function startApp(input: ModuleOptionsInput = {}) {
  options = resolveOptions({
    token: { secret: SECRET },
    tokenRefresh: { storage: { driver: 'memory' } },
    logging: { level: 'debug', security: true },
    rateLimit: { enabled: false },
    providers: {
      mock: { enableInProduction: true, mockUsers: [{ sub: 'mo', email: 'mo@example.com', name: 'Mo' }] },
      password: { passwordHashRounds: 4 },
    },
    twoFactor: { enabled: true, issuer: 'Unit App', maxFailures: MAX_FAILURES },
    ...input,
  }, false)
  nitro.options = options
  const served = await serveModule(options)
  server = served.server
  base = served.base
  nitro.base = base
}

function registerHandlers() {
  defineAuthHandlers({
    password: passwordAccounts,
    twoFactor: {
      find: userId => states.get(userId) ?? null,
      save: (userId, state, { reason }) => {
        saves.push({ userId, reason })
        if (state) states.set(userId, structuredClone(state))
        else states.delete(userId)
      },
      isRequired: user => required?.(user) ?? false,
    },
  })
}

const consoleSpies: Array<{ mockRestore: () => void }> = []
beforeAll(async () => {
  for (const method of ['error', 'warn', 'info', 'debug', 'log'] as const) {
    consoleSpies.push(vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void logs.push(args.map(a => (a instanceof Error ? `${a.message} ${a.stack}` : typeof a === 'string' ? a : JSON.stringify(a))).join(' '))))
  }
  await startApp({})
  registerHandlers()
})

beforeEach(() => {
  nitro.hooks.length = 0
  nitro.failHook = ''
  required = undefined
})

afterEach(() => {
  vi.useRealTimers()
})

afterAll(async () => {
  for (const spy of consoleSpies) spy.mockRestore()
  resetAuthHandlers()
  await new Promise(resolve => server?.close(resolve))
  await peekAuthContext()?.dispose()
})

const hookNames = () => nitro.hooks.map(h => h.name)

describe('enrolment from the settings', () => {
  it('starts with a secret shown once, saves nothing until a code confirms it, then answers recovery codes', async () => {
    const { token, sub, email } = await account()
    const b = browser()
    const started = await json<{ uri: string, secret: string }>(await b.post(twoFactor('enrol'), {}, token))
    expect(started.secret).toMatch(/^[A-Z2-7]{32}$/)
    const uri = new URL(started.uri)
    expect(uri.protocol).toBe('otpauth:')
    expect(uri.hostname).toBe('totp')
    expect(decodeURIComponent(uri.pathname)).toBe(`/Unit App:${email}`)
    expect(Object.fromEntries(uri.searchParams)).toEqual({ issuer: 'Unit App', secret: started.secret, algorithm: 'SHA1', digits: '6', period: '30' })
    expect(states.has(sub)).toBe(false)
    expect(await json(await b.get(twoFactor('status'), token))).toEqual({ enabled: false, recoveryCodesLeft: 0 })

    await errorOf(await b.post(twoFactor('confirm'), { code: String((Number(totp(started.secret)) + 1) % 1e6).padStart(6, '0') }, token), 400, 'two_factor_invalid_code')
    const { recoveryCodes } = await json<{ recoveryCodes: string[] }>(await b.post(twoFactor('confirm'), { code: totp(started.secret) }, token))
    expect(recoveryCodes).toHaveLength(10)
    for (const code of recoveryCodes) expect(code).toMatch(/^[2-9a-z]{5}-[2-9a-z]{5}$/)
    expect(new Set(recoveryCodes).size).toBe(10)

    const state = states.get(sub)!
    expect(state).toMatchObject({ version: 1, algorithm: 'SHA1', digits: 6, period: 30 })
    expect(state.secret).toMatch(/^v1\./)
    expect(state.secret).not.toContain(started.secret)
    expect(state.recoveryCodes).toHaveLength(10)
    for (const hash of state.recoveryCodes) expect(hash).toMatch(/^[0-9a-f]{64}$/)
    expect(JSON.stringify(state)).not.toMatch(new RegExp(recoveryCodes.map(c => c.replace('-', '-?')).join('|')))
    expect(saves.at(-1)).toEqual({ userId: sub, reason: 'enrolled' })
    expect(hookNames()).toContain('svc:twoFactor:enrolled')

    expect(await json(await b.get(twoFactor('status'), token))).toEqual({ enabled: true, recoveryCodesLeft: 10 })
    await errorOf(await b.post(twoFactor('enrol'), {}, token), 409, 'two_factor_already_enabled')
    await errorOf(await b.post(twoFactor('confirm'), { code: totp(started.secret) }, token), 400, 'two_factor_enrolment_expired')
  })

  it('ends the user\'s other sessions when it is turned on and when it is turned off; the caller\'s stays', async () => {
    const { email, token, sub } = await account()
    const second = await firstFactor(email)
    const { accessToken: before } = await exchange(second.b, codeOf(second.redirect))
    const { secret } = await enrol(token)
    await errorOf(await second.b.get(twoFactor('status'), before), 401, 'session_revoked')
    expect(nitro.hooks.filter(h => h.name === 'svc:session:revoked').at(-1)?.payload).toMatchObject({ userId: sub, reason: 'two_factor_change' })
    expect(await json(await browser().get(twoFactor('status'), token))).toMatchObject({ enabled: true })

    const third = await firstFactor(email)
    const done = await json<{ redirect: string }>(await third.b.post(twoFactor('verify'), { flow: flowOf(third.redirect), code: unusedCode(secret) }))
    const { accessToken: during } = await exchange(third.b, codeOf(done.redirect))
    await json(await browser().post(twoFactor('disable'), { password: PASSWORD }, token))
    await errorOf(await third.b.get(twoFactor('status'), during), 401, 'session_revoked')
    expect(await json(await browser().get(twoFactor('status'), token))).toEqual({ enabled: false, recoveryCodesLeft: 0 })
  })

  it('needs a recent login to start: the token of a session that logged in 16 minutes ago is refused', async () => {
    const { token } = await account()
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 16 * 60_000 })
    try {
      await errorOf(await browser().post(twoFactor('enrol'), {}, token), 403, 'reauthentication_required')
      expect(logs.join('\n')).toMatch(/request.refused .*"reason":"recent_login","action":"two_factor_enrol"/)
    }
    finally {
      vi.useRealTimers()
    }
    await json(await browser().post(twoFactor('enrol'), {}, token))
  })

  it('needs a recent login to confirm too: an enrolment started while fresh is refused once the session is stale', async () => {
    const { token, sub } = await account()
    const start = Date.now()
    vi.useFakeTimers({ toFake: ['Date'], now: start + 14 * 60_000 })
    const { secret } = await json<{ secret: string }>(await browser().post(twoFactor('enrol'), {}, token))
    vi.setSystemTime(start + 16 * 60_000)
    await errorOf(await browser().post(twoFactor('confirm'), { code: totp(secret) }, token), 403, 'reauthentication_required')
    vi.useRealTimers()
    expect(states.has(sub)).toBe(false)
  })

  it('needs a bearer token of the user, not an impersonated one, and refuses cross-origin calls', async () => {
    const b = browser()
    await errorOf(await b.get(twoFactor('status')), 401, 'unauthorized')
    await errorOf(await b.post(twoFactor('enrol')), 401, 'unauthorized')
    const { token } = await account()
    await errorOf(await b.post(twoFactor('enrol'), {}, token, { origin: 'https://evil.example' }), 403, 'cross_origin_request')
    const { token: impersonated } = await peekAuthContext()!.tokens.sign({ sub: 'someone', impersonation: { originalUserSub: 'admin', originalUserLookupId: 'admin', impersonatedAt: new Date().toISOString() } })
    await errorOf(await b.post(twoFactor('enrol'), {}, impersonated), 403, 'impersonated_session')
  })
})

describe('login with a second factor', () => {
  it('stops the password login at the second-factor page; a code completes it, svc:success after the verified hook', async () => {
    const { email, token, sub } = await account()
    const { secret } = await enrol(token)
    nitro.hooks.length = 0
    const { b, redirect } = await firstFactor(email)
    expect(redirect).toMatch(/^\/auth\/second-factor\?flow=[\w-]{32}$/)
    expect(hookNames()).toEqual(['svc:userInfo', 'svc:twoFactor:challenged'])
    const done = await json<{ success: true, redirect: string }>(await b.post(twoFactor('verify'), { flow: flowOf(redirect), code: unusedCode(secret) }))
    expect(done.redirect).toMatch(/^\/auth\/callback\?code=[\w-]+$/)
    expect(hookNames()).toEqual(['svc:userInfo', 'svc:twoFactor:challenged', 'svc:twoFactor:verified', 'svc:success'])
    expect((await exchange(b, codeOf(done.redirect))).sub).toBe(sub)
    // Completed: the flow is gone.
    await errorOf(await b.post(twoFactor('verify'), { flow: flowOf(redirect), code: totp(secret) }), 400, 'two_factor_login_expired')
  })

  it('asks for it after a mock OAuth login too, and runs nothing of svc:success before the code', async () => {
    const userId = 'mock:mo'
    const secret = new Secret({ size: 20 }).base32
    const ctx = peekAuthContext()!
    states.set(userId, { version: 1, secret: secretBox(ctx).seal(userId, secret), recoveryCodes: [], algorithm: 'SHA1', digits: 6, period: 30, enabledAt: '', recoveryCodesAt: '' })
    const { b, redirect } = await mockLogin()
    expect(redirect).toMatch(/^\/auth\/second-factor\?flow=/)
    expect(hookNames()).not.toContain('svc:success')
    // What the store holds while the login waits (records are not encrypted at rest here).
    const stored = (await Promise.all(storage.backends.map(async backend => Promise.all((await backend.keys('')).map(key => backend.get(key)))))).flat().join('\n')
    const done = await json<{ redirect: string }>(await b.post(twoFactor('verify'), { flow: flowOf(redirect), code: totp(secret) }))
    expect((await exchange(b, codeOf(done.redirect))).sub).toBe(userId)
    expect(hookNames().filter(n => n === 'svc:success')).toHaveLength(1)
    // svc:success gets the provider's tokens, which the pending login kept sealed.
    const tokens = nitro.hooks.find(h => h.name === 'svc:success')!.payload.tokens as { access_token: string }
    expect(tokens.access_token).toMatch(/^.{16,}$/)
    expect(stored).not.toContain(tokens.access_token)
  })

  it('refuses a code used once (in its window), also for another login', async () => {
    const { email, token } = await account()
    const { secret } = await enrol(token)
    const code = unusedCode(secret)
    const first = await firstFactor(email)
    await json(await first.b.post(twoFactor('verify'), { flow: flowOf(first.redirect), code }))
    const second = await firstFactor(email)
    nitro.hooks.length = 0
    await errorOf(await second.b.post(twoFactor('verify'), { flow: flowOf(second.redirect), code }), 400, 'two_factor_invalid_code')
    expect(nitro.hooks.find(h => h.name === 'svc:twoFactor:failed')?.payload).toMatchObject({ reason: 'replayed_code', stage: 'login' })
  })

  it('accepts a code typed as apps show it, with a space', async () => {
    const { email, token, sub } = await account()
    const { secret } = await enrol(token)
    const { b, redirect } = await firstFactor(email)
    const spaced = unusedCode(secret).replace(/^(\d{3})/, '$1 ')
    const done = await json<{ redirect: string }>(await b.post(twoFactor('verify'), { flow: flowOf(redirect), code: spaced }))
    expect((await exchange(b, codeOf(done.redirect))).sub).toBe(sub)
  })

  it('refuses a recovery code that new recovery codes replaced while it was checked, and keeps the new ones', async () => {
    const { email, token, sub } = await account()
    const { secret, recoveryCodes } = await enrol(token)
    const old = states.get(sub)!
    const { b, redirect } = await firstFactor(email)
    await json(await browser().post(twoFactor('recovery-codes'), { code: unusedCode(secret) }, token))
    const renewed = states.get(sub)!.recoveryCodes
    // The verify reads the state from before the regeneration first (as a request racing it would).
    let reads = 0
    defineAuthHandlers({ twoFactor: { find: userId => (userId === sub && reads++ === 0 ? old : states.get(userId) ?? null) } })
    try {
      await errorOf(await b.post(twoFactor('verify'), { flow: flowOf(redirect), recoveryCode: recoveryCodes[0] }), 400, 'two_factor_invalid_code')
    }
    finally {
      registerHandlers()
    }
    expect(reads).toBe(2)
    expect(states.get(sub)!.recoveryCodes).toEqual(renewed)
  })

  it('takes a recovery code once; the host state is saved without it', async () => {
    const { email, token, sub } = await account()
    const { recoveryCodes } = await enrol(token)
    const first = await firstFactor(email)
    // Case, spaces and dashes do not matter.
    await json(await first.b.post(twoFactor('verify'), { flow: flowOf(first.redirect), recoveryCode: ` ${recoveryCodes[3]!.toUpperCase().replace('-', ' ')} ` }))
    expect(states.get(sub)!.recoveryCodes).toHaveLength(9)
    expect(saves.at(-1)).toEqual({ userId: sub, reason: 'recovery_code_used' })
    expect(hookNames()).toContain('svc:twoFactor:recoveryCodeUsed')
    expect(await json(await browser().get(twoFactor('status'), token))).toEqual({ enabled: true, recoveryCodesLeft: 9 })
    const second = await firstFactor(email)
    await errorOf(await second.b.post(twoFactor('verify'), { flow: flowOf(second.redirect), recoveryCode: recoveryCodes[3] }), 400, 'two_factor_invalid_code')
  })

  it('ends the pending login after maxAttempts wrong codes: even the right code then needs a new login', async () => {
    const { email, token } = await account()
    const { secret } = await enrol(token)
    const { b, redirect } = await firstFactor(email)
    const flow = flowOf(redirect)
    const wrong = String((Number(totp(secret)) + 500_000) % 1e6).padStart(6, '0')
    for (let i = 1; i < 5; i++) await errorOf(await b.post(twoFactor('verify'), { flow, code: wrong }), 400, 'two_factor_invalid_code')
    await errorOf(await b.post(twoFactor('verify'), { flow, code: wrong }), 400, 'too_many_attempts')
    await errorOf(await b.post(twoFactor('verify'), { flow, code: unusedCode(secret) }), 400, 'two_factor_login_expired')
  })

  it('counts wrong codes per user across fresh logins: past maxFailures even the right code is refused (429), a recovery code still works', async () => {
    const { email, token, sub } = await account()
    const { secret, recoveryCodes } = await enrol(token)
    const wrong = String((Number(totp(secret)) + 500_000) % 1e6).padStart(6, '0')
    let failures = 0
    while (failures < MAX_FAILURES) {
      const { b, redirect } = await firstFactor(email)
      for (let i = 0; i < 4 && failures < MAX_FAILURES; i++, failures++) await errorOf(await b.post(twoFactor('verify'), { flow: flowOf(redirect), code: wrong }), 400, 'two_factor_invalid_code')
    }
    const { b, redirect } = await firstFactor(email)
    const refused = await b.post(twoFactor('verify'), { flow: flowOf(redirect), code: unusedCode(secret) })
    await errorOf(refused, 429, 'rate_limited')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(86_000)
    expect(nitro.hooks.filter(h => h.name === 'svc:twoFactor:failed').at(-1)!.payload).toMatchObject({ userId: sub, reason: 'failure_budget_exhausted' })
    // The settings routes draw on the same budget.
    await errorOf(await browser().post(twoFactor('recovery-codes'), { code: unusedCode(secret) }, token), 429, 'rate_limited')
    // Recovery codes (about 50 bits each) are not held by it: the user is not locked out.
    const done = await json<{ redirect: string }>(await b.post(twoFactor('verify'), { flow: flowOf(redirect), recoveryCode: recoveryCodes[0] }))
    expect((await exchange(b, codeOf(done.redirect))).sub).toBe(sub)
  })

  it('burns a pending login presented by another browser', async () => {
    const { email, token } = await account()
    const { secret } = await enrol(token)
    const { b, redirect } = await firstFactor(email)
    await errorOf(await browser().post(twoFactor('verify'), { flow: flowOf(redirect), code: unusedCode(secret) }), 401, 'code_binding_mismatch')
    await errorOf(await b.post(twoFactor('verify'), { flow: flowOf(redirect), code: unusedCode(secret) }), 400, 'two_factor_login_expired')
  })

  it('of 50 concurrent verifies with the right code, exactly one wins', async () => {
    const { email, token } = await account()
    const { secret } = await enrol(token)
    const { b, redirect } = await firstFactor(email)
    const code = unusedCode(secret)
    const answers = await Promise.all(Array.from({ length: 50 }, () => b.post(twoFactor('verify'), { flow: flowOf(redirect), code })))
    expect(answers.filter(r => r.status === 200)).toHaveLength(1)
    const errors = await Promise.all(answers.filter(r => r.status !== 200).map(async r => (await r.json() as { error: string }).error))
    for (const error of errors) expect(['two_factor_invalid_code', 'two_factor_login_expired', 'too_many_attempts']).toContain(error)
  })

  it('of 50 logins racing with one recovery code, exactly one wins', async () => {
    const { email, token } = await account()
    const { recoveryCodes } = await enrol(token)
    const logins = []
    for (let i = 0; i < 50; i++) logins.push(await firstFactor(email))
    const answers = await Promise.all(logins.map(({ b, redirect }) => b.post(twoFactor('verify'), { flow: flowOf(redirect), recoveryCode: recoveryCodes[0] })))
    expect(answers.filter(r => r.status === 200)).toHaveLength(1)
  })

  it('answers malformed and oversized requests with a JSON error', async () => {
    const b = browser()
    await errorOf(await b.raw(twoFactor('verify'), '{not json'), 400, 'bad_request')
    await errorOf(await b.post(twoFactor('verify'), { code: '123456' }), 400, 'bad_request')
    await errorOf(await b.post(twoFactor('verify'), { flow: 'x', code: '123456', recoveryCode: 'aaaaa-aaaaa' }), 400, 'bad_request')
    await errorOf(await b.post(twoFactor('verify'), { flow: 'x' }), 400, 'bad_request')
    await errorOf(await b.post(twoFactor('verify'), { flow: 'x'.repeat(65), code: '123456' }), 400, 'bad_request')
    await errorOf(await b.post(twoFactor('verify'), { flow: 'x', code: 12 }), 400, 'bad_request')
    await errorOf(await b.post(twoFactor('verify'), { flow: 'unknown-flow', code: '123456' }), 400, 'two_factor_login_expired')
    await errorOf(await b.post(twoFactor('verify'), { flow: 'x', code: '1'.repeat(20_000) }), 413, 'payload_too_large')
    await errorOf(await b.post(twoFactor('verify'), { flow: 'x', code: '123456' }, undefined, { origin: 'https://evil.example' }), 403, 'cross_origin_request')
    const { token } = await account()
    await errorOf(await b.post(twoFactor('disable'), {}, token), 400, 'bad_request')
    await errorOf(await b.post(twoFactor('disable'), { password: PASSWORD, code: '123456' }, token), 400, 'bad_request')
  })

  it('fails closed when the host hands back a broken state (500, never a login without the second factor)', async () => {
    const { email, sub } = await account()
    states.set(sub, { secret: 42 } as unknown as TwoFactorState)
    const b = browser()
    await json(await b.post(password('login'), { email, password: PASSWORD }))
    const res = await b.post(password('login-verify'), { code: mails.filter(m => m.action === 'login').at(-1)!.code, email })
    await errorOf(res, 500, 'internal_error')
    states.delete(sub)
  })
})

describe('a login that requires enrolment', () => {
  it('enrols during the login, shows the recovery codes once and completes the login', async () => {
    const { email, sub } = await account()
    required = user => user.sub === sub
    const { b, redirect } = await firstFactor(email)
    expect(redirect).toMatch(/^\/auth\/second-factor\?flow=[\w-]+&enrol=1$/)
    const flow = flowOf(redirect)
    await errorOf(await b.post(twoFactor('verify'), { flow, code: '123456' }), 400, 'two_factor_not_enabled')
    await errorOf(await b.post(twoFactor('login-confirm'), { flow, code: '123456' }), 400, 'two_factor_enrolment_expired')
    const { secret } = await json<{ secret: string }>(await b.post(twoFactor('login-enrol'), { flow }))
    await errorOf(await browser().post(twoFactor('login-enrol'), { flow: 'other' }), 400, 'two_factor_login_expired')
    const wrong = String((Number(totp(secret)) + 500_000) % 1e6).padStart(6, '0')
    await errorOf(await b.post(twoFactor('login-confirm'), { flow, code: wrong }), 400, 'two_factor_invalid_code')
    expect(states.has(sub)).toBe(false)
    const done = await json<{ redirect: string, recoveryCodes: string[] }>(await b.post(twoFactor('login-confirm'), { flow, code: totp(secret) }))
    expect(done.recoveryCodes).toHaveLength(10)
    expect(states.get(sub)?.recoveryCodes).toHaveLength(10)
    expect(nitro.hooks.find(h => h.name === 'svc:twoFactor:enrolled')?.payload).toMatchObject({ userId: sub, during: 'login' })
    expect((await exchange(b, codeOf(done.redirect))).sub).toBe(sub)
  })

  it('requireForAll asks every user; a passkey login with user verification (secondFactor) is never asked', async () => {
    const ctx = await createAuthContext(resolveOptions({ token: { secret: SECRET }, tokenRefresh: { storage: { driver: 'memory' } }, logging: { level: 'silent' }, twoFactor: { enabled: true, requireForAll: true, pendingLoginTTL: 900 } }, true), { features })
    // Without isRequired, requireForAll decides.
    defineAuthHandlers({ twoFactor: { isRequired: undefined } })
    try {
      const event = fakeEvent({ method: 'GET', url: '/auth/google' })
      const login = (passkey: boolean) => completeLogin(ctx, { event, provider: 'google', user: { sub: 'g-1' }, tokens: { access_token: 't' }, secondFactor: passkey ? 'passkey' : undefined })
      const asked = await login(false)
      expect(asked.secondFactor?.enrol).toBe(true)
      // The browser's binding cookie lives as long as the pending login.
      expect(setCookies(event).find(line => line.startsWith('__Host-svc-code='))).toMatch(/Max-Age=900/)
      expect(asked.code).toBeUndefined()
      const passkey = await login(true)
      expect(passkey.secondFactor).toBeUndefined()
      expect(passkey.location).toMatch(/^\/auth\/callback\?code=/)
    }
    finally {
      registerHandlers()
      await ctx.dispose()
    }
  })
})

describe('disabling and new recovery codes', () => {
  it('needs the password, a code or a recovery code; afterwards logins are not asked', async () => {
    const { email, token, sub } = await account()
    const { secret, recoveryCodes } = await enrol(token)
    const b = browser()
    await errorOf(await b.post(twoFactor('disable'), { password: 'Wrong-password-1' }, token), 400, 'current_password_incorrect')
    expect(nitro.hooks.find(h => h.name === 'svc:twoFactor:failed')?.payload).toMatchObject({ reason: 'wrong_password', stage: 'disable' })
    const renewed = await json<{ recoveryCodes: string[] }>(await b.post(twoFactor('recovery-codes'), { code: unusedCode(secret) }, token))
    expect(renewed.recoveryCodes).toHaveLength(10)
    expect(saves.at(-1)).toEqual({ userId: sub, reason: 'recovery_codes_regenerated' })
    // The old recovery codes stopped working.
    await errorOf(await b.post(twoFactor('disable'), { recoveryCode: recoveryCodes[0] }, token), 400, 'two_factor_invalid_code')
    await json(await b.post(twoFactor('disable'), { password: PASSWORD }, token))
    expect(states.has(sub)).toBe(false)
    expect(saves.at(-1)).toEqual({ userId: sub, reason: 'disabled' })
    expect(nitro.hooks.find(h => h.name === 'svc:twoFactor:disabled')?.payload).toMatchObject({ userId: sub, method: 'password' })
    await errorOf(await b.post(twoFactor('disable'), { password: PASSWORD }, token), 400, 'two_factor_not_enabled')
    const { redirect } = await firstFactor(email)
    expect(redirect).toMatch(/^\/auth\/callback\?code=/)
  })

  it('needs a recent login: a session that logged in 16 minutes ago can neither turn it off nor make new codes', async () => {
    const { email, token, sub } = await account()
    const { secret, recoveryCodes } = await enrol(token)
    const before = structuredClone(states.get(sub)!)
    const savesBefore = saves.length
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 16 * 60_000 })
    try {
      const stale = browser()
      await errorOf(await stale.post(twoFactor('disable'), { password: PASSWORD }, token), 403, 'reauthentication_required')
      await errorOf(await stale.post(twoFactor('disable'), { code: totp(secret) }, token), 403, 'reauthentication_required')
      await errorOf(await stale.post(twoFactor('disable'), { recoveryCode: recoveryCodes[0] }, token), 403, 'reauthentication_required')
      await errorOf(await stale.post(twoFactor('recovery-codes'), { code: totp(secret) }, token), 403, 'reauthentication_required')
    }
    finally {
      vi.useRealTimers()
    }
    expect(states.get(sub)).toEqual(before)
    expect(saves.length).toBe(savesBefore)
    expect(logs.join('\n')).toMatch(/request.refused .*"reason":"recent_login","action":"two_factor_disable"/)
    // A login asks for the second factor still; its fresh session may change it.
    const { b, redirect } = await firstFactor(email)
    const done = await json<{ redirect: string }>(await b.post(twoFactor('verify'), { flow: flowOf(redirect), recoveryCode: recoveryCodes[0] }))
    const { accessToken: fresh } = await exchange(b, codeOf(done.redirect))
    await json(await browser().post(twoFactor('recovery-codes'), { code: unusedCode(secret) }, fresh))
    await json(await browser().post(twoFactor('disable'), { password: PASSWORD }, fresh))
    expect(states.has(sub)).toBe(false)
  })

  it('with a TOTP code or a recovery code', async () => {
    const { token, sub } = await account()
    const { secret } = await enrol(token)
    await json(await browser().post(twoFactor('disable'), { code: unusedCode(secret) }, token))
    expect(states.has(sub)).toBe(false)
    const again = await enrol(token)
    await json(await browser().post(twoFactor('disable'), { recoveryCode: again.recoveryCodes[9] }, token))
    expect(states.has(sub)).toBe(false)
  })

  it('an audit hook that throws changes nothing', async () => {
    const { token, sub } = await account()
    nitro.failHook = 'svc:twoFactor:enrolled'
    await enrol(token)
    expect(states.has(sub)).toBe(true)
  })
})

describe.each(['memory', 'fs', 'redis'] as const)('one recovery code raced on the %s store', (driver) => {
  it('of 50 concurrent checks of the code, exactly one succeeds', async () => {
    const prefix = `svc-auth-test:${randomUUID()}:`
    const dir = driver === 'fs' ? await mkdtemp(join(tmpdir(), 'svc-auth-recovery-')) : ''
    const storage = driver === 'redis' ? { driver, url: testRedisUrl(), prefix } : { driver, base: dir }
    const ctx = await createAuthContext(resolveOptions({ token: { secret: SECRET }, tokenRefresh: { storage }, logging: { level: 'silent' }, twoFactor: { enabled: true } }, true), { features })
    const userId = `recovery-race-${driver}-${randomUUID()}`
    try {
      const codes = newRecoveryCodes(10)
      const sealed = secretBox(ctx).seal(userId, new Secret({ size: 20 }).base32)
      states.set(userId, newState(sealed, codes.map(code => hashRecoveryCode(ctx, userId, code)), { algorithm: 'SHA1', digits: 6, period: 30 }))
      // The host's database answers a few milliseconds after it read the row, as over a network:
      // the checks read the state, still holding the code, before the first one saves it without.
      defineAuthHandlers({ twoFactor: { find: async (id) => {
        const found = states.get(id) ?? null
        await new Promise(resolve => setTimeout(resolve, 10))
        return found
      } } })
      const state = states.get(userId)!
      const results = await Promise.all(Array.from({ length: 50 }, () => checkSecondFactor(ctx, fakeEvent({ method: 'POST' }), userId, state, { recoveryCode: codes[0]! }, 'login')))
      expect(results.filter(result => result.ok)).toHaveLength(1)
      expect(results.filter(result => !result.ok)).toEqual(Array.from({ length: 49 }, () => ({ ok: false, reason: 'replayed_code' })))
      expect(states.get(userId)!.recoveryCodes).toHaveLength(9)
    }
    finally {
      registerHandlers()
      states.delete(userId)
      await ctx.dispose()
      if (dir) await rm(dir, { recursive: true, force: true })
      if (driver === 'redis') await deleteRedisKeys(prefix)
    }
  })
})

describe('codes and secrets', () => {
  const params = { algorithm: 'SHA1' as const, digits: 6, period: 30 }
  const secret = new Secret({ size: 20 }).base32

  it('accept the time steps of the window (±1) and nothing beyond, on a fake clock', () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const step = 58_000_000
    for (const [at, label] of [[step * 30_000, 'first ms of the step'], [step * 30_000 + 29_999, 'last ms of the step']] as const) {
      vi.setSystemTime(at)
      expect(matchTimeStep(secret, params, codeAt(secret, params, step), 1), label).toBe(step)
      expect(matchTimeStep(secret, params, codeAt(secret, params, step - 1), 1), label).toBe(step - 1)
      expect(matchTimeStep(secret, params, codeAt(secret, params, step + 1), 1), label).toBe(step + 1)
      expect(matchTimeStep(secret, params, codeAt(secret, params, step - 2), 1), label).toBeNull()
      expect(matchTimeStep(secret, params, codeAt(secret, params, step + 2), 1), label).toBeNull()
      expect(matchTimeStep(secret, params, codeAt(secret, params, step - 1), 0), label).toBeNull()
    }
    // One ms later the step moves: the code of step - 1 is now two steps old.
    vi.setSystemTime((step + 1) * 30_000)
    expect(matchTimeStep(secret, params, codeAt(secret, params, step - 1), 1)).toBeNull()
    expect(matchTimeStep(secret, params, codeAt(secret, params, step), 1)).toBe(step)
    // What authenticator apps show (otpauth's TOTP at this time) is the current step.
    expect(matchTimeStep(secret, params, totp(secret), 1)).toBe(step + 1)
    for (const bad of ['12345', '1234567', '12345a', ' 123456', '١٢٣٤٥٦']) expect(matchTimeStep(secret, params, bad, 1)).toBeNull()
  })

  it('are sealed bound to the user, and still open with a previous server secret (then marked stale)', async () => {
    const rotated = 'two-factor-next-secret-0123456789-abcdefghij'
    const make = (input: ModuleOptionsInput) => createAuthContext(resolveOptions({ tokenRefresh: { storage: { driver: 'memory' } }, logging: { level: 'silent' }, ...input }, true), { features })
    const [before, after, forgotten] = await Promise.all([
      make({ token: { secret: SECRET } }),
      make({ token: { secret: rotated, previousSecrets: [SECRET] } }),
      make({ token: { secret: rotated } }),
    ])
    try {
      const sealed = secretBox(before).seal('u1', secret)
      expect(sealed).not.toContain(secret)
      expect(secretBox(before).open('u1', sealed)).toEqual({ secret, stale: false })
      expect(secretBox(after).open('u1', sealed)).toEqual({ secret, stale: true })
      expect(secretBox(forgotten).open('u1', sealed)).toBeNull()
      expect(secretBox(before).open('u2', sealed)).toBeNull()
      expect(secretBox(after).open('u1', secretBox(after).seal('u1', secret))).toEqual({ secret, stale: false })
    }
    finally {
      await Promise.all([before.dispose(), after.dispose(), forgotten.dispose()])
    }
  })

  it('a code checked after a key rotation saves the secret again under the current server secret', async () => {
    const { token, sub } = await account()
    const { secret: totpSecret } = await enrol(token)
    const ctx = await createAuthContext(resolveOptions({ token: { secret: 'two-factor-next-secret-0123456789-abcdefghij', previousSecrets: [SECRET] }, tokenRefresh: { storage: { driver: 'memory' } }, logging: { level: 'silent' }, twoFactor: { enabled: true } }, true), { features })
    try {
      expect(secretBox(ctx).open(sub, states.get(sub)!.secret)?.stale).toBe(true)
      const result = await checkSecondFactor(ctx, fakeEvent({ method: 'POST' }), sub, states.get(sub)!, { code: unusedCode(totpSecret) }, 'login')
      expect(result).toEqual({ ok: true, method: 'code' })
      expect(saves.at(-1)).toEqual({ userId: sub, reason: 'secret_resealed' })
      expect(secretBox(ctx).open(sub, states.get(sub)!.secret)).toEqual({ secret: totpSecret, stale: false })
    }
    finally {
      await ctx.dispose()
    }
  })

  it('never reach the logs, storage keys and values, or the public runtime config', async () => {
    logs.length = 0
    const { email, token } = await account()
    const { secret: totpSecret, recoveryCodes } = await enrol(token)
    const first = await firstFactor(email)
    await errorOf(await first.b.post(twoFactor('verify'), { flow: flowOf(first.redirect), recoveryCode: 'zzzzz-zzzzz' }), 400, 'two_factor_invalid_code')
    await json(await first.b.post(twoFactor('verify'), { flow: flowOf(first.redirect), recoveryCode: recoveryCodes[1] }))
    // A pending enrolment is stored too (sealed).
    const other = await account()
    await json(await browser().post(twoFactor('enrol'), {}, other.token))
    const secrets = [totpSecret, ...recoveryCodes, ...recoveryCodes.map(c => c.replace('-', ''))]
    const keys = (await Promise.all(storage.backends.map(backend => backend.keys('')))).flat()
    const values = (await Promise.all(storage.backends.map(async backend => Promise.all((await backend.keys('')).map(key => backend.get(key)))))).flat()
    const stored = [...keys, ...values.map(v => v ?? '')].join('\n')
    expect(logs.join('\n')).toContain('two_factor')
    for (const secret of secrets) {
      expect(stored).not.toContain(secret)
      expect(logs.join('\n')).not.toContain(secret)
    }
    expect(keys.filter(key => key.includes('two-factor')).length).toBeGreaterThan(3)
    const publicConfig = JSON.stringify(buildRuntimeConfig(options, { dev: false }).public)
    expect(publicConfig).not.toMatch(/twoFactor|issuer|maxFailures/)
  })
})

/** The mock provider's login in a fresh browser: where the browser goes after the provider. */
async function mockLogin(): Promise<{ b: Browser, redirect: string }> {
  const b = browser()
  const start = await b.get(`${options.endpoints.loginPath}/mock`)
  const atProvider = await b.get(start.headers.get('location')!)
  const back = await b.get(atProvider.headers.get('location')!)
  expect(back.status).toBe(302)
  return { b, redirect: back.headers.get('location')! }
}
