import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { resolveOptions, toPublicConfig } from '../../src/build/resolve-options'
import type { ModuleOptionsInput, PublicAuthConfig } from '../../src/runtime/types/options'
import { buildStepContext } from './helpers/build-steps'

// usePassword() against a fake Nuxt app: `useState` is a map of refs, `navigateTo` records where
// it goes, and the global `$fetch` answers like the module's routes.
const env = vi.hoisted(() => ({
  states: new Map<string, { value: unknown }>(),
  navigations: [] as Array<{ path: string, options?: Record<string, unknown> }>,
  app: undefined as unknown,
}))

vi.mock('#imports', async () => {
  const { fakeUseState } = await import('./helpers/nuxt-state')
  return {
    useNuxtApp: () => env.app,
    useState: fakeUseState(() => env.states),
    navigateTo: (path: string, options?: Record<string, unknown>) => {
      env.navigations.push({ path, options })
    },
  }
})
vi.mock('#build/svc-auth/client-features.mjs', () => ({ passkey: undefined, organizations: undefined }))

const kit = vi.hoisted(() => ({ addServerHandler: vi.fn(), addServerPlugin: vi.fn(), addServerImports: vi.fn(), addImports: vi.fn() }))
vi.mock('@nuxt/kit', () => kit)

const { usePassword, PASSWORD_STATE } = await import('../../src/runtime/password/app/usePassword')
const { useAuth } = await import('../../src/runtime/app/auth-client')
const { ACCESS_TOKEN_STATE } = await import('../../src/runtime/app/state')
const { setupPassword } = await import('../../src/build/password')

interface Request {
  url: string
  method: string
  body?: Record<string, unknown>
  authorization: string | null
  accept: string | null
  credentials?: string
}

type Answer = unknown | ((request: Request) => unknown)

/** An error as ofetch throws it for an error answer of the module: status and `{ statusCode, message, error }`. */
function refusal(status: number, error: string, message: string) {
  return Object.assign(new Error(`[POST] ${status}`), { status, statusCode: status, data: { statusCode: status, error, message } })
}

let requests: Request[] = []
let answers: Map<string, Answer[]>

/** The next answers of `url` (each used once; a function sees the request, an Error is thrown). */
function answer(url: string, ...next: Answer[]) {
  answers.set(url, [...(answers.get(url) ?? []), ...next])
}

async function fakeFetch(url: string, options: { method?: string, body?: Record<string, unknown>, headers?: HeadersInit, credentials?: string } = {}) {
  const headers = new Headers(options.headers)
  const request: Request = { url, method: options.method ?? 'GET', body: options.body, authorization: headers.get('authorization'), accept: headers.get('accept'), credentials: options.credentials }
  requests.push(request)
  const next = answers.get(url)?.shift()
  if (next === undefined) throw Object.assign(new Error(`no answer for ${url}`), { data: undefined })
  const value = typeof next === 'function' ? (next as (r: Request) => unknown)(request) : next
  if (value instanceof Error) throw value
  return value
}

function jwt(payload: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${part({ alg: 'HS256' })}.${part(payload)}.signature`
}

/** A fresh fake Nuxt app of the module's public config for `input`. */
function fakeApp(input: ModuleOptionsInput = {}) {
  const svcAuth: PublicAuthConfig = toPublicConfig(resolveOptions({
    redirect: { success: '/dashboard', error: '/error', logout: '/' },
    providers: { password: {} },
    ...input,
  }, true))
  env.states.clear()
  env.navigations = []
  env.app = {
    $config: { public: { svcAuth }, app: { baseURL: '/' } },
    isHydrating: false,
    hooks: { hookOnce: () => {} },
    runWithContext: (fn: () => unknown) => fn(),
  }
  return env.app as { _svcAuth?: { afterLogin?: string } }
}

const pendingValue = () => env.states.get(PASSWORD_STATE)?.value
const posts = () => requests.filter(r => r.method === 'POST').map(r => r.url)

beforeEach(() => {
  requests = []
  answers = new Map()
  const fetch = Object.assign(fakeFetch, { raw: fakeFetch })
  vi.stubGlobal('$fetch', fetch)
  fakeApp()
})

afterEach(() => {
  vi.unstubAllGlobals()
  vi.clearAllMocks()
})

describe('usePassword: register and login', () => {
  it('register sends the credentials with the cookie and waits for the code; verify goes to the callback page', async () => {
    const password = usePassword()
    answer('/auth/password/register', { success: true })
    await password.register('new@example.com', 'Sunflower-42x')
    expect(requests[0]).toMatchObject({ url: '/auth/password/register', method: 'POST', body: { email: 'new@example.com', password: 'Sunflower-42x' }, credentials: 'include' })
    expect(password.pending.value).toEqual({ action: 'register', email: 'new@example.com' })
    expect(env.navigations).toEqual([])

    answer('/auth/password/register-verify', { success: true, redirect: '/auth/callback?code=abc' })
    await password.verify(' 123456 ')
    const verify = requests.at(-1)!
    // A JSON answer, not the 302 of an HTML form; the code trimmed, the email of the pending step.
    expect(verify).toMatchObject({ url: '/auth/password/register-verify', method: 'POST', body: { code: '123456', email: 'new@example.com' }, accept: 'application/json', credentials: 'include' })
    expect(env.navigations).toEqual([{ path: '/auth/callback?code=abc', options: { replace: true } }])
    expect(password.pending.value).toBeNull()
  })

  it('login with a redirect: the callback page exchanges the code and lands on the chosen page', async () => {
    const app = fakeApp()
    const password = usePassword()
    answer('/auth/password/login', { success: true })
    await password.login('ada@example.com', 'Sunflower-42x', { redirect: '/notes?tab=2' })
    expect(pendingValue()).toEqual({ action: 'login', email: 'ada@example.com', redirect: '/notes?tab=2' })

    answer('/auth/password/login-verify', { success: true, redirect: '/auth/callback?code=c1' })
    await password.verify('654321')
    expect(app._svcAuth?.afterLogin).toBe('/notes?tab=2')

    // What the callback page does: the token answer of a password login names no redirect.
    const token = jwt({ sub: 'u1', email: 'ada@example.com', jti: 'j', sid: 's' })
    answer('/auth/token', ({ body }: Request) => (body?.code === 'c1' ? { accessToken: token, token } : refusal(401, 'invalid_code', 'no')))
    await useAuth().handleCallback({ code: 'c1' })
    expect(env.navigations.at(-1)).toEqual({ path: '/notes?tab=2', options: { replace: true } })
    expect(env.states.get(ACCESS_TOKEN_STATE)?.value).toBe(token)
    // Used once: the next login without a choice lands on redirect.success.
    expect(app._svcAuth?.afterLogin).toBeUndefined()
    answer('/auth/token', { accessToken: token })
    await useAuth().handleCallback({ code: 'c2' })
    expect(env.navigations.at(-1)?.path).toBe('/dashboard')
  })

  it('drops a redirect that is not a same-origin relative path, as useAuth().login does', async () => {
    const app = fakeApp()
    const password = usePassword()
    answer('/auth/password/login', { success: true })
    await password.login('ada@example.com', 'Sunflower-42x', { redirect: 'https://evil.example/' })
    expect(pendingValue()).toEqual({ action: 'login', email: 'ada@example.com' })
    answer('/auth/password/login-verify', { success: true, redirect: '/auth/callback?code=c1' })
    await password.verify('111111', { redirect: '//evil.example' })
    expect(app._svcAuth?.afterLogin).toBeUndefined()
    answer('/auth/token', { accessToken: jwt({ sub: 'u1' }) })
    await useAuth().handleCallback({ code: 'c1' })
    expect(env.navigations.at(-1)?.path).toBe('/dashboard')
  })

  it('a login that needs a second factor goes to the second-factor page; the redirect waits for the callback', async () => {
    const app = fakeApp()
    const password = usePassword()
    answer('/auth/password/login', { success: true })
    await password.login('tf@example.com', 'Sunflower-42x', { redirect: '/settings' })
    answer('/auth/password/login-verify', { success: true, redirect: '/auth/second-factor?flow=f1' })
    await password.verify('222222')
    expect(env.navigations).toEqual([{ path: '/auth/second-factor?flow=f1', options: { replace: true } }])
    expect(app._svcAuth?.afterLogin).toBe('/settings')
    // The second-factor page then goes to the callback page, which lands on the chosen page.
    answer('/auth/token', { accessToken: jwt({ sub: 'u2' }) })
    await useAuth().handleCallback({ code: 'after-totp' })
    expect(env.navigations.at(-1)?.path).toBe('/settings')
  })

  it('a refused call rejects with the module\'s error; a wrong code keeps the pending step', async () => {
    const password = usePassword()
    answer('/auth/password/login', refusal(400, 'invalid_credentials', 'Invalid email or password'))
    const login = await password.login('ada@example.com', 'wrong').catch((e: unknown) => e)
    expect(password.errorOf(login)).toEqual({ error: 'invalid_credentials', message: 'Invalid email or password' })
    expect(password.pending.value).toBeNull()

    answer('/auth/password/login', { success: true })
    await password.login('ada@example.com', 'Sunflower-42x')
    answer('/auth/password/login-verify', refusal(400, 'invalid_verification_code', 'Invalid or expired code'))
    const verify = await password.verify('000000').catch((e: unknown) => e)
    expect(password.errorOf(verify)).toEqual({ error: 'invalid_verification_code', message: 'Invalid or expired code' })
    expect(password.pending.value).toEqual({ action: 'login', email: 'ada@example.com' })
    expect(env.navigations).toEqual([])

    // Without an answer (offline): a generic message.
    expect(password.errorOf(new TypeError('fetch failed'))).toEqual({ error: 'network_error', message: expect.stringContaining('check the connection') })
  })

  it('verify needs a pending step or an action; the code alone may be checked', async () => {
    const password = usePassword()
    await expect(password.verify('123456')).rejects.toThrow(/No code is awaited/)
    expect(requests).toEqual([])

    answer('/auth/password/login-verify', { success: true, redirect: '/auth/callback?code=x' })
    await password.verify('123456', { action: 'login' })
    expect(requests.at(-1)!.body).toEqual({ code: '123456' })

    // The pending step's email belongs to its own action only.
    answer('/auth/password/register', { success: true })
    await password.register('a@example.com', 'Sunflower-42x')
    answer('/auth/password/login-verify', { success: true, redirect: '/auth/callback?code=y' })
    await password.verify('123456', { action: 'login', email: 'b@example.com' })
    expect(requests.at(-1)!.body).toEqual({ code: '123456', email: 'b@example.com' })
    // A code of another action leaves the pending step waiting.
    expect(password.pending.value).toEqual({ action: 'register', email: 'a@example.com' })
  })

  it('refuses an answer that names no same-origin page, without navigating', async () => {
    const password = usePassword()
    answer('/auth/password/login', { success: true })
    await password.login('ada@example.com', 'Sunflower-42x')
    answer('/auth/password/login-verify', { success: true, redirect: 'https://evil.example/callback' })
    await expect(password.verify('123456')).rejects.toThrow(/did not answer where to go/)
    expect(env.navigations).toEqual([])
    expect(password.pending.value).not.toBeNull()
  })

  it('cancel forgets the pending step', async () => {
    const password = usePassword()
    answer('/auth/password/register', { success: true })
    await password.register('a@example.com', 'Sunflower-42x')
    password.cancel()
    expect(password.pending.value).toBeNull()
    // Shared by every usePassword() of the app (useState).
    answer('/auth/password/login', { success: true })
    await password.login('a@example.com', 'Sunflower-42x')
    expect(usePassword().pending.value).toEqual({ action: 'login', email: 'a@example.com' })
  })

  it('follows endpoints.authPath', async () => {
    fakeApp({ endpoints: { authPath: '/api/auth' } } as ModuleOptionsInput)
    const password = usePassword()
    answer('/api/auth/password/login', { success: true })
    await password.login('a@example.com', 'Sunflower-42x')
    answer('/api/auth/password/login-verify', { success: true, redirect: '/auth/callback?code=z' })
    await password.verify('123456')
    expect(posts()).toEqual(['/api/auth/password/login', '/api/auth/password/login-verify'])
  })
})

describe('usePassword: reset and change', () => {
  it('reset: request (the server\'s message), verify goes to the reset page, complete with the session id', async () => {
    const app = fakeApp()
    const password = usePassword()
    answer('/auth/password/reset-request', { success: true, message: 'If an account exists for this email, a code has been sent to it.' })
    expect(await password.requestReset('ada@example.com')).toBe('If an account exists for this email, a code has been sent to it.')
    expect(requests[0]!.body).toEqual({ email: 'ada@example.com' })
    expect(password.pending.value).toEqual({ action: 'reset', email: 'ada@example.com' })

    answer('/auth/password/reset-verify', { success: true, redirect: '/reset-password?session=s1', sessionId: 's1' })
    await password.verify('333333')
    expect(requests.at(-1)).toMatchObject({ url: '/auth/password/reset-verify', body: { code: '333333', email: 'ada@example.com' } })
    expect(env.navigations).toEqual([{ path: '/reset-password?session=s1', options: { replace: true } }])
    expect(app._svcAuth?.afterLogin).toBeUndefined()

    answer('/auth/password/reset-complete', { success: true })
    await password.completeReset('s1', 'Moonflower-43y')
    expect(requests.at(-1)).toMatchObject({ url: '/auth/password/reset-complete', method: 'POST', body: { sessionId: 's1', newPassword: 'Moonflower-43y' }, credentials: 'include' })

    answer('/auth/password/reset-complete', refusal(400, 'invalid_reset_session', 'Invalid or expired reset session'))
    const refused = await password.completeReset('s1', 'Moonflower-43y').catch((e: unknown) => e)
    expect(password.errorOf(refused).error).toBe('invalid_reset_session')
  })

  it('change sends the access token; a 401 refreshes once and retries once with the new token', async () => {
    const password = usePassword()
    const old = jwt({ sub: 'u1', n: 1 })
    const fresh = jwt({ sub: 'u1', n: 2 })
    env.states.set(ACCESS_TOKEN_STATE, { value: old })
    answer('/auth/password/change', { success: true })
    await password.change('Sunflower-42x', 'Moonflower-43y')
    expect(requests[0]).toMatchObject({ url: '/auth/password/change', method: 'POST', body: { currentPassword: 'Sunflower-42x', newPassword: 'Moonflower-43y' }, authorization: `Bearer ${old}` })

    requests = []
    answer('/auth/password/change', refusal(401, 'invalid_token', 'expired'), { success: true })
    answer('/auth/refresh', { accessToken: fresh })
    await password.change('Sunflower-42x', 'Moonflower-43y')
    expect(requests.map(r => [r.url, r.authorization])).toEqual([
      ['/auth/password/change', `Bearer ${old}`],
      ['/auth/refresh', null],
      ['/auth/password/change', `Bearer ${fresh}`],
    ])
  })

  it('change: other refusals reach the caller without a refresh; a failed refresh rejects with the 401', async () => {
    const password = usePassword()
    env.states.set(ACCESS_TOKEN_STATE, { value: jwt({ sub: 'u1' }) })
    answer('/auth/password/change', refusal(400, 'current_password_incorrect', 'Current password is incorrect'))
    const wrong = await password.change('nope', 'Moonflower-43y').catch((e: unknown) => e)
    expect(password.errorOf(wrong).error).toBe('current_password_incorrect')
    expect(posts()).toEqual(['/auth/password/change'])

    requests = []
    answer('/auth/password/change', refusal(401, 'unauthorized', 'Authentication required'))
    answer('/auth/refresh', refusal(401, 'invalid_refresh_token', 'gone'))
    const logged = await password.change('Sunflower-42x', 'Moonflower-43y').catch((e: unknown) => e)
    expect(password.errorOf(logged).error).toBe('unauthorized')
    expect(posts()).toEqual(['/auth/password/change', '/auth/refresh'])
  })
})

describe('the password build step', () => {
  it('auto-imports usePassword, hashPassword and verifyPassword when the provider is on', () => {
    setupPassword(buildStepContext({ providers: { password: {} } }))
    expect(kit.addImports).toHaveBeenCalledWith([{ name: 'usePassword', from: '/module/runtime/password/app/usePassword' }])
    expect(kit.addServerImports).toHaveBeenCalledWith([
      { name: 'hashPassword', from: '/module/runtime/password/server/utils/password-hash' },
      { name: 'verifyPassword', from: '/module/runtime/password/server/utils/password-hash' },
    ])
  })

  it('adds nothing when it is off, so its client code is not in the bundle', () => {
    setupPassword(buildStepContext({ providers: { mock: { mockUsers: [{ sub: 'a' }] } } } as ModuleOptionsInput))
    expect(kit.addImports).not.toHaveBeenCalled()
    expect(kit.addServerImports).not.toHaveBeenCalled()
    expect(kit.addServerHandler).not.toHaveBeenCalled()
  })
})
