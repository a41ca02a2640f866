import { execFile } from 'node:child_process'
import type { Server } from 'node:http'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { CookieJar } from '../helpers/cookie-jar'
import { resolveOptions } from '../../src/build/resolve-options'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { passwordRoutePath } from '../../src/runtime/password/password-paths'
import { peekAuthContext } from '../../src/runtime/server/utils/auth-context'
import type { ModuleOptions } from '../../src/runtime/types/options'
import { memoryPasswordAccounts, serveModule } from './helpers/module-router'

// The defences of the module's endpoints, through its real routes on a plain h3 app on a loopback
// port (Nitro's runtime is these two functions): what the e2e tests check on built apps, here in
// the fast run too.
const nitro = vi.hoisted(() => ({ options: undefined as unknown, base: '' }))
vi.mock('nitropack/runtime', () => ({
  useRuntimeConfig: () => ({ svcAuth: nitro.options }),
  useNitroApp: () => ({
    hooks: { callHook: async () => {} },
    localFetch: (path: string, init: RequestInit) => fetch(`${nitro.base}${path}`, init),
  }),
}))

const execFileAsync = promisify(execFile)

const PASSWORD = 'Sunflower-42x'
const NEW_PASSWORD = 'Marigold-77y'
const MAX_BODY = 16 * 1024

let server: Server
let base = ''
let options: ModuleOptions
const { codes, handlers: passwordAccounts } = memoryPasswordAccounts()

beforeAll(async () => {
  options = resolveOptions({
    token: { secret: 'route-defences-secret-0123456789-abcdefghij' },
    tokenRefresh: { storage: { driver: 'memory' } },
    logging: { level: 'silent' },
    security: { maxBodySize: MAX_BODY },
    impersonation: { enabled: true },
    providers: {
      mock: { enableInProduction: true, mockUsers: [{ sub: 'mock-1', email: 'mock@example.com', name: 'Mock One' }] },
      password: { passwordHashRounds: 4 },
    },
  }, false)
  nitro.options = options
  const served = await serveModule(options)
  server = served.server
  base = served.base
  nitro.base = base
  defineAuthHandlers({
    impersonation: { fetchTarget: id => ({ 'target-1': { sub: 'target-1', email: 'target@example.com', name: 'Target One' }, 'mock:mock-1': { sub: 'mock:mock-1', email: 'mock@example.com' } } as Record<string, Record<string, string>>)[id] ?? null },
    password: passwordAccounts,
  })
})

afterAll(async () => {
  resetAuthHandlers()
  server?.closeAllConnections()
  await new Promise(resolve => server?.close(resolve))
  await peekAuthContext()?.dispose()
})

/** One browser: its cookies, and requests to the app (as its own origin unless `headers` say otherwise). */
function browser() {
  const jar = new CookieJar()
  const send = async (method: string, path: string, { body, bearer, headers }: { body?: unknown, bearer?: string, headers?: Record<string, string> } = {}) => {
    const all: Record<string, string> = { accept: 'application/json', cookie: jar.header(), ...headers }
    if (body !== undefined) all['content-type'] = 'application/json'
    if (bearer) all.authorization = `Bearer ${bearer}`
    const res = await fetch(`${base}${path}`, { method, headers: all, body: body === undefined ? undefined : JSON.stringify(body), redirect: 'manual' })
    jar.store(res)
    return res
  }
  return {
    jar,
    get: (path: string, bearer?: string) => send('GET', path, { bearer }),
    post: (path: string, body: unknown = {}, extra: { bearer?: string, headers?: Record<string, string> } = {}) => send('POST', path, { body, ...extra }),
  }
}
type Browser = ReturnType<typeof browser>

/** The body of an answer, checked to have `status`. */
async function json<T>(res: Response, status = 200): Promise<T> {
  const body = await res.json() as T
  expect(res.status, JSON.stringify(body)).toBe(status)
  return body
}

/** The error code of an answer, checked to have `status`. */
const errorOf = async (res: Response, status: number) => (await json<{ error: string }>(res, status)).error

const password = (path: string) => passwordRoutePath(options.endpoints.authPath, path)

/** Starts a login with the mock provider in `b`: the authorization code the callback gets (bound to `b`). */
async function mockCode(b: Browser): Promise<string> {
  const start = await b.get(`${options.endpoints.loginPath.replace(/\/+$/, '')}/mock`)
  expect(start.status).toBe(302)
  const atProvider = await b.get(start.headers.get('location')!)
  expect(atProvider.status).toBe(302)
  const back = await b.get(atProvider.headers.get('location')!)
  const callback = new URL(back.headers.get('location')!, base)
  expect(callback.pathname).toBe(options.endpoints.callbackPath)
  return callback.searchParams.get('code')!
}

/** The access token `b` gets for `code` (its refresh cookie stays in its jar). */
async function exchange(b: Browser, code: string): Promise<string> {
  return (await json<{ accessToken: string }>(await b.post(options.endpoints.tokenPath, { code }))).accessToken
}

/** A browser logged in with the mock provider, and its access token. */
async function mockSession(): Promise<{ b: Browser, token: string }> {
  const b = browser()
  return { b, token: await exchange(b, await mockCode(b)) }
}

const lastCode = (email: string, action: string) => codes.filter(c => c.email === email && c.action === action).at(-1)!.code

/** A browser logged in with a password (email + password, then the emailed code). */
async function passwordSession(email: string, secret = PASSWORD): Promise<{ b: Browser, token: string }> {
  const b = browser()
  await json(await b.post(password('login'), { email, password: secret }))
  const { redirect } = await json<{ redirect: string }>(await b.post(password('login-verify'), { code: lastCode(email, 'login'), email }))
  return { b, token: await exchange(b, new URL(redirect, base).searchParams.get('code')!) }
}

async function registerUser(email: string): Promise<void> {
  const b = browser()
  await json(await b.post(password('register'), { email, password: PASSWORD }))
  await json(await b.post(password('register-verify'), { code: lastCode(email, 'register'), email }))
}

/** `b`'s refresh: the status and error code of the answer (its jar keeps the rotated cookie). */
async function refresh(b: Browser, headers?: Record<string, string>): Promise<string> {
  const res = await b.post(options.endpoints.refreshPath, {}, { headers })
  return res.status === 200 ? '200' : `${res.status} ${(await res.json() as { error: string }).error}`
}

/** What the app answers an access token on the user info route: 200, or the status and error code. */
async function tokenAnswer(token: string): Promise<string> {
  const res = await browser().get(options.endpoints.userInfoPath, token)
  return res.status === 200 ? '200' : `${res.status} ${(await res.json() as { error: string }).error}`
}

describe('authorization codes are bound to the browser they were issued to', () => {
  it('a code exchanged without the binding cookie is refused and burnt', async () => {
    const owner = browser()
    const code = await mockCode(owner)
    expect(await errorOf(await browser().post(options.endpoints.tokenPath, { code }), 401)).toBe('code_binding_mismatch')
    expect(await errorOf(await owner.post(options.endpoints.tokenPath, { code }), 401)).toBe('invalid_code')
  })

  it('a code exchanged with another browser\'s binding cookie is refused; the owner exchanges its own', async () => {
    const owner = browser()
    const other = browser()
    await mockCode(other)
    const code = await mockCode(owner)
    const binding = (b: Browser) => [...b.jar].find(([name]) => name.endsWith('svc-code'))?.[1]
    expect(binding(other)).toBeDefined()
    expect(binding(other)).not.toBe(binding(owner))
    expect(await errorOf(await other.post(options.endpoints.tokenPath, { code }), 401)).toBe('code_binding_mismatch')
    const mine = await mockCode(owner)
    expect(await exchange(owner, mine)).toMatch(/^eyJ/)
  })
})

describe('a body over the limit', () => {
  interface Outcome { path: string, sent: number, status?: number, body?: string, error?: string, ms?: number }

  /** Runs test/unit/helpers/chunked-posts.mjs (a client in a process of its own): one outcome per request. */
  async function chunkedPosts(paths: string[], rounds: number, bytes: number, client: 'close' | 'keep-alive' | 'stubborn' | 'stubborn-slow'): Promise<Outcome[]> {
    const helper = fileURLToPath(new URL('./helpers/chunked-posts.mjs', import.meta.url))
    const { stdout } = await execFileAsync(process.execPath, [helper, base, String(rounds), String(bytes), client, ...paths], { timeout: 60_000 })
    return stdout.trim().split('\n').map(line => JSON.parse(line) as Outcome)
  }

  const refused = { statusCode: 413, message: `Request body is larger than ${MAX_BODY} bytes`, error: 'payload_too_large' }

  it.each(['close', 'keep-alive'] as const)('1 MB chunked bodies to password login and reset-complete (Connection: %s): every client reads the 413, none sees a reset', async (agent) => {
    const outcomes = await chunkedPosts([password('login'), password('reset-complete')], 10, 1024 * 1024, agent)
    expect(outcomes).toHaveLength(20)
    expect(outcomes.filter(o => o.status !== 413).map(o => `${o.path}: ${o.error ?? o.status}`)).toEqual([])
    for (const outcome of outcomes) expect(JSON.parse(outcome.body!)).toEqual(refused)
  }, 60_000)

  it('the rest of a refused body is read up to a bounded size only (then the client\'s sending stalls), and the connection is closed', async () => {
    // A client that would send 1 GB as fast as it can whatever the answer, and stops only when its connection ends.
    const [outcome] = await chunkedPosts([password('login')], 1, 1024 * 1024 * 1024, 'stubborn')
    expect(outcome!.status).toBe(413)
    expect(outcome!.sent).toBeLessThan(64 * 1024 * 1024)
  }, 60_000)

  it('the rest of a refused body is read for a bounded time only, then the connection is closed', async () => {
    // The same client sending 16 KB every 50 ms (at most 0.3 MB/s): the time (seconds) runs out
    // long before the size (megabytes, more than 12 s away) would.
    const [outcome] = await chunkedPosts([password('login')], 1, 1024 * 1024 * 1024, 'stubborn-slow')
    expect(outcome!.status).toBe(413)
    expect(outcome!.sent).toBeLessThan(3 * 1024 * 1024)
    expect(outcome!.ms).toBeLessThan(9_000)
  }, 60_000)

  it('a body within the limit is read as usual', async () => {
    const [outcome] = await chunkedPosts([password('login')], 1, 8 * 1024, 'close')
    expect(outcome).toMatchObject({ status: 400 })
  })
})

describe('the refresh cookie is refused to other origins', () => {
  it('a cross-origin POST to the refresh endpoint answers 403 cross_origin_request; the own origin refreshes', async () => {
    const { b } = await mockSession()
    expect(await refresh(b, { origin: 'https://evil.example' })).toBe('403 cross_origin_request')
    expect(await refresh(b, { 'sec-fetch-site': 'cross-site' })).toBe('403 cross_origin_request')
    expect(await refresh(b, { origin: 'null' })).toBe('403 cross_origin_request')
    expect(await refresh(b, { referer: 'https://evil.example/page' })).toBe('403 cross_origin_request')
    expect(await refresh(b, { 'origin': base, 'sec-fetch-site': 'same-origin' })).toBe('200')
  })
})

describe('a new password ends sessions', () => {
  it('a change ends every other session of the user and keeps the current one', async () => {
    const email = `change-${Date.now().toString(36)}@example.com`
    await registerUser(email)
    const other = await passwordSession(email)
    const current = await passwordSession(email)
    expect(await json(await current.b.post(password('change'), { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }, { bearer: current.token }))).toEqual({ success: true })
    expect(await refresh(other.b)).toBe('401 invalid_refresh_token')
    expect(await tokenAnswer(other.token)).toBe('401 session_revoked')
    expect(await tokenAnswer(current.token)).toBe('200')
    expect(await refresh(current.b)).toBe('200')
  })

  it('a reset ends every session of the user', async () => {
    const email = `reset-${Date.now().toString(36)}@example.com`
    await registerUser(email)
    const sessions = [await passwordSession(email), await passwordSession(email)]
    const b = browser()
    await json(await b.post(password('reset-request'), { email }))
    await vi.waitFor(() => expect(codes.some(c => c.email === email && c.action === 'reset')).toBe(true))
    const { sessionId } = await json<{ sessionId: string }>(await b.post(password('reset-verify'), { code: lastCode(email, 'reset'), email }))
    expect(await json(await b.post(password('reset-complete'), { sessionId, newPassword: NEW_PASSWORD }))).toEqual({ success: true })
    for (const session of sessions) {
      expect(await refresh(session.b)).toBe('401 invalid_refresh_token')
      expect(await tokenAnswer(session.token)).toBe('401 session_revoked')
    }
    await passwordSession(email, NEW_PASSWORD)
  })
})

describe('logout', () => {
  it('revokes the session: its refresh cookie no longer refreshes and its access tokens are refused', async () => {
    const { b, token } = await mockSession()
    expect(await refresh(b)).toBe('200')
    const cookie = b.jar.header()
    expect(await tokenAnswer(token)).toBe('200')
    expect(await json(await b.post(options.endpoints.logoutPath))).toEqual({ success: true })
    // The cookie as it was before the logout (the answer cleared it from the jar).
    const kept = browser()
    for (const pair of cookie.split('; ')) kept.jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1))
    expect(await refresh(kept)).toBe('401 invalid_refresh_token')
    expect(await tokenAnswer(token)).toBe('401 session_revoked')
  })
})

describe('an impersonated session', () => {
  it('cannot be refreshed (403 impersonated_session), and the way back restores the requester', async () => {
    const { b, token } = await mockSession()
    const { accessToken } = await json<{ accessToken: string }>(await b.post(options.endpoints.impersonatePath, { targetUserId: 'target-1' }, { bearer: token }))
    expect(await refresh(b)).toBe('403 impersonated_session')
    expect(await json(await b.post(options.endpoints.unimpersonatePath, {}, { bearer: accessToken }))).toEqual({ accessToken: expect.any(String) })
    expect(await refresh(b)).toBe('200')
  })
})

describe('several refresh cookies', () => {
  it('are never served from the first: 401 refresh_cookie_conflict, and a logout ends the session of each', async () => {
    const attacker = await mockSession()
    const victim = await mockSession()
    const name = options.tokenRefresh.cookie.cookieName
    const tossed = browser()
    tossed.jar.set(name, `${attacker.b.jar.get(name)}; ${name}=${victim.b.jar.get(name)}`)
    expect(await refresh(tossed)).toBe('401 refresh_cookie_conflict')
    expect(await refresh(victim.b)).toBe('200')
    const both = browser()
    both.jar.set(name, `junk; ${name}=${victim.b.jar.get(name)}`)
    expect(await json(await both.post(options.endpoints.logoutPath))).toEqual({ success: true })
    expect(await refresh(victim.b)).toBe('401 invalid_refresh_token')
  })
})
