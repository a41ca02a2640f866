import { createServer, type Server } from 'node:http'
import { createApp, createRouter, defineEventHandler, toNodeListener, type H3Event } from 'h3'
import { hash } from '@node-rs/bcrypt'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { resolveOptions } from '../../src/build/resolve-options'
import { createAuthContext, type AuthContext } from '../../src/runtime/server/lib/core/context'
import { sendAuthError } from '../../src/runtime/server/lib/edge/errors'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import * as signIn from '../../src/runtime/password/server/password-flows'
import * as newPassword from '../../src/runtime/password/server/new-password'
import { RESET_SESSION_TTL } from '../../src/runtime/server/lib/core/records/reset-session'
import { usePasswordRuntime } from '../../src/runtime/password/server/password-runtime'
import type { PasswordUser, VerificationCodeDetails } from '../../src/runtime/types/auth'
import { features } from './helpers/features'

// bcrypt as it is, with its calls counted (how much hashing work each answer costs).
const bcryptCalls = vi.hoisted(() => ({ verify: 0, hash: 0 }))
vi.mock('@node-rs/bcrypt', async (importOriginal) => {
  const original = await importOriginal<typeof import('@node-rs/bcrypt')>()
  return {
    ...original,
    verify: (...args: Parameters<typeof original.verify>) => {
      bcryptCalls.verify++
      return original.verify(...args)
    },
    hash: (...args: Parameters<typeof original.hash>) => {
      bcryptCalls.hash++
      return original.hash(...args)
    },
  }
})

// The password flows on a plain h3 app (no Nuxt), with a memory store and bcrypt cost 4.
let ctx: AuthContext
let server: Server
let base = ''

beforeAll(async () => {
  ctx = await createAuthContext(resolveOptions({
    token: { secret: 'password-flows-secret-0123456789-abcdefgh' },
    tokenRefresh: { storage: { driver: 'memory' } },
    logging: { level: 'silent' },
    rateLimit: { enabled: false },
    providers: { password: { passwordHashRounds: 4 } },
  }, true), { features })
  const router = createRouter()
  const wrap = (flow: (ctx: AuthContext, event: H3Event) => Promise<unknown>) => defineEventHandler(async (event) => {
    try {
      return await flow(ctx, event)
    }
    catch (error) {
      return sendAuthError(event, error)
    }
  })
  const flows = { ...signIn, ...newPassword }
  for (const [path, flow] of Object.entries({
    'register': flows.register,
    'register-verify': flows.registerVerify,
    'login': flows.login,
    'login-verify': flows.loginVerify,
    'reset-request': flows.resetRequest,
    'reset-verify': flows.resetVerify,
    'reset-complete': flows.resetComplete,
    'change': flows.change,
  })) router.use(`/auth/password/${path}`, wrap(flow))
  const app = createApp()
  app.use(router)
  server = createServer(toNodeListener(app))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
})

afterEach(() => {
  vi.useRealTimers()
  resetAuthHandlers()
})

afterAll(async () => {
  await new Promise(resolve => server?.close(resolve))
  await ctx?.dispose()
})

/** The code cookie of the one "browser" of these tests, as its cookie jar would keep it. */
let jar = ''
const post = async (path: string, body: unknown, { cookie = jar }: { cookie?: string } = {}) => {
  const res = await fetch(`${base}/auth/password/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'accept': 'application/json', ...(cookie ? { cookie } : {}) }, body: JSON.stringify(body) })
  const set = res.headers.getSetCookie().find(line => line.startsWith('__Host-svc-code='))
  if (set) jar = set.split(';')[0]!
  return res
}

interface Store {
  users: Map<string, PasswordUser>
  codes: Array<{ email: string, code: string, action: string }>
  persisted: Array<[string, string]>
}

/** Handlers under the alternative names of the spec: onUserLookup, onMagicCodeGenerated, password.onUserPersist. */
function alternativeHandlers(): Store {
  const store: Store = { users: new Map(), codes: [], persisted: [] }
  defineAuthHandlers({
    password: {
      onUserLookup: email => store.users.get(email) ?? null,
      onMagicCodeGenerated: (email, code, action) => {
        store.codes.push({ email, code, action })
      },
      onUserPersist: (email, hashedPassword) => {
        store.persisted.push([email, hashedPassword])
        store.users.set(email, { id: `id-${email}`, email, hashedPassword })
        return { id: `id-${email}` }
      },
    },
  })
  return store
}

async function register(store: Store, email: string, password = 'Sunflower-42x') {
  expect((await post('register', { email, password })).status).toBe(200)
  const code = store.codes.at(-1)!.code
  const res = await post('register-verify', { code })
  expect(res.status).toBe(200)
  return (await res.json()) as { redirect: string }
}

async function resetSession(store: Store, email: string): Promise<string> {
  expect((await post('reset-request', { email })).status).toBe(200)
  await vi.waitFor(() => expect(store.codes.at(-1)?.action).toBe('reset'))
  const res = await post('reset-verify', { code: store.codes.at(-1)!.code, email })
  return ((await res.json()) as { sessionId: string }).sessionId
}

describe('alternative handler names', () => {
  it('register and log in through onUserLookup, onMagicCodeGenerated and password.onUserPersist', async () => {
    const store = alternativeHandlers()
    const { redirect } = await register(store, 'alt@example.com')
    expect(redirect).toMatch(/^\/auth\/callback\?code=[\w-]+$/)
    expect(store.persisted).toHaveLength(1)
    expect(store.persisted[0]![0]).toBe('alt@example.com')
    expect(store.persisted[0]![1]).toMatch(/^\$2b\$04\$/)
    expect((await post('login', { email: 'alt@example.com', password: 'Sunflower-42x' })).status).toBe(200)
    expect(store.codes.at(-1)).toMatchObject({ email: 'alt@example.com', action: 'login' })
    expect((await post('login-verify', { code: store.codes.at(-1)!.code })).status).toBe(200)
  })

  it('reset-complete persists through password.onUserPersist', async () => {
    const store = alternativeHandlers()
    await register(store, 'alt-reset@example.com')
    const sessionId = await resetSession(store, 'alt-reset@example.com')
    expect((await post('reset-complete', { sessionId, newPassword: 'Marigold-77y' })).status).toBe(200)
    expect(store.persisted).toHaveLength(2)
    expect(store.persisted[1]![1]).not.toBe(store.persisted[0]![1])
  })
})

describe('reset session', () => {
  it('expires after 5 minutes', async () => {
    const store = alternativeHandlers()
    await register(store, 'expire@example.com')
    const sessionId = await resetSession(store, 'expire@example.com')
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() + (RESET_SESSION_TTL + 1) * 1000)
    const res = await post('reset-complete', { sessionId, newPassword: 'Marigold-77y' })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: 'invalid_reset_session' })
    expect(store.persisted).toHaveLength(1)
  })

  it('is bound to the browser that verified the code: elsewhere it is refused and burnt', async () => {
    const store = alternativeHandlers()
    await register(store, 'bound-reset@example.com')
    const sessionId = await resetSession(store, 'bound-reset@example.com')
    const owner = jar
    const elsewhere = await post('reset-complete', { sessionId, newPassword: 'Marigold-77y' }, { cookie: '__Host-svc-code=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })
    expect(await elsewhere.json()).toMatchObject({ statusCode: 400, error: 'invalid_reset_session' })
    const afterwards = await post('reset-complete', { sessionId, newPassword: 'Marigold-77y' }, { cookie: owner })
    expect(await afterwards.json()).toMatchObject({ error: 'invalid_reset_session' })
    expect(store.persisted).toHaveLength(1)
  })

  it('is used once when completed concurrently', async () => {
    const store = alternativeHandlers()
    await register(store, 'race@example.com')
    const sessionId = await resetSession(store, 'race@example.com')
    const results = await Promise.all(Array.from({ length: 8 }, () => post('reset-complete', { sessionId, newPassword: 'Marigold-77y' })))
    expect(results.filter(r => r.status === 200)).toHaveLength(1)
    expect(results.filter(r => r.status === 400)).toHaveLength(7)
  })

  it('reset-request answers the same when the lookup fails after the answer, and logs it', async () => {
    const errors = vi.spyOn(ctx.logger, 'error').mockImplementation(() => {})
    const sent: string[] = []
    let lookups = 0
    defineAuthHandlers({
      password: {
        findUser: () => {
          lookups++
          throw new Error('database down')
        },
        sendVerificationCode: (email) => {
          sent.push(email)
        },
      },
    })
    try {
      const res = await post('reset-request', { email: 'lookup-fails@example.com' })
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ success: true })
      await vi.waitFor(() => expect(errors).toHaveBeenCalledWith('Handling a reset request failed', expect.any(Error)))
      expect(lookups).toBe(1)
      expect(sent).toEqual([])
    }
    finally {
      errors.mockRestore()
    }
  })

  it('reset-verify refuses the right code after too many attempts', async () => {
    const store = alternativeHandlers()
    await register(store, 'reset-attempts@example.com')
    await post('reset-request', { email: 'reset-attempts@example.com' })
    await vi.waitFor(() => expect(store.codes.at(-1)?.action).toBe('reset'))
    const code = store.codes.at(-1)!.code
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0')
    for (let i = 0; i < 5; i++) await post('reset-verify', { code: wrong, email: 'reset-attempts@example.com' })
    const res = await post('reset-verify', { code, email: 'reset-attempts@example.com' })
    expect(await res.json()).toMatchObject({ statusCode: 400, error: 'too_many_attempts' })
  })
})

describe('host policy and hashing', () => {
  it('validatePassword replaces the built-in policy', async () => {
    const store = alternativeHandlers()
    defineAuthHandlers({ password: { validatePassword: pw => (pw.includes('x') ? ['no letter x'] : pw.length > 3) } })
    const listed = await post('register', { email: 'policy@example.com', password: 'Sunflower-42x' })
    expect(await listed.json()).toMatchObject({ error: 'password_policy', message: 'Password does not meet the policy: needs no letter x' })
    const refused = await post('register', { email: 'policy@example.com', password: 'abc' })
    expect(await refused.json()).toMatchObject({ error: 'password_policy' })
    // Accepted although the built-in policy would refuse it (no uppercase, no digit, common).
    expect((await post('register', { email: 'policy@example.com', password: 'password' })).status).toBe(200)
    expect(store.codes.at(-1)?.email).toBe('policy@example.com')
  })

  it('hashPassword and verifyPassword replace bcrypt', async () => {
    const store = alternativeHandlers()
    defineAuthHandlers({ password: { hashPassword: pw => `plain:${pw}`, verifyPassword: (pw, hash) => hash === `plain:${pw}` } })
    await register(store, 'custom-hash@example.com')
    expect(store.persisted.at(-1)).toEqual(['custom-hash@example.com', 'plain:Sunflower-42x'])
    expect((await post('login', { email: 'custom-hash@example.com', password: 'Sunflower-42x' })).status).toBe(200)
    expect((await post('login', { email: 'custom-hash@example.com', password: 'Sunflower-42y' })).status).toBe(400)
    expect((await post('login', { email: 'nobody@example.com', password: 'Sunflower-42x' })).status).toBe(400)
  })
})

describe('misconfiguration', () => {
  it('answers a generic 500 without findUser and logs nothing to the client', async () => {
    defineAuthHandlers({ password: { sendVerificationCode: () => {} } })
    const res = await post('login', { email: 'a@example.com', password: 'Sunflower-42x' })
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ statusCode: 500, message: 'Internal server error', error: 'internal_error' })
  })
})

describe('hashing work is the same for every refusal', () => {
  /** bcrypt verifications one login answer cost. */
  async function workOf(email: string, password: string): Promise<{ status: number, work: number }> {
    await usePasswordRuntime(ctx).hasher.warmUp()
    const before = bcryptCalls.verify
    const res = await post('login', { email, password })
    return { status: res.status, work: bcryptCalls.verify - before }
  }

  it('an unknown email costs one bcrypt verification, like a wrong password', async () => {
    const store = alternativeHandlers()
    await register(store, 'known@example.com')
    expect(await workOf('unknown@example.com', 'Sunflower-42x')).toEqual({ status: 400, work: 1 })
    expect(await workOf('known@example.com', 'Sunflower-42y')).toEqual({ status: 400, work: 1 })
    expect(await workOf('known@example.com', 'Sunflower-42x')).toEqual({ status: 200, work: 1 })
  })

  it('a successful login computes one bcrypt verification and no hash', async () => {
    const store = alternativeHandlers()
    await register(store, 'one-hash@example.com')
    await usePasswordRuntime(ctx).hasher.warmUp()
    const before = { ...bcryptCalls }
    expect((await post('login', { email: 'one-hash@example.com', password: 'Sunflower-42x' })).status).toBe(200)
    expect({ verify: bcryptCalls.verify - before.verify, hash: bcryptCalls.hash - before.hash }).toEqual({ verify: 1, hash: 0 })
  })

  it('a password longer than 72 bytes is refused like a wrong one, with the same work, never checked against the hash', async () => {
    const store = alternativeHandlers()
    const password = `Aa1-${'x'.repeat(68)}`
    await register(store, 'long@example.com', password)
    expect(await workOf('long@example.com', `${password}tail`)).toEqual({ status: 400, work: 1 })
    expect(await workOf('nobody-long@example.com', `${password}tail`)).toEqual({ status: 400, work: 1 })
    expect(await workOf('long@example.com', password)).toEqual({ status: 200, work: 1 })
    const registered = await post('register', { email: 'too-long@example.com', password: `${password}y` })
    expect(await registered.json()).toMatchObject({ error: 'password_policy', message: expect.stringContaining('at most 72 bytes') })
  })

  it('a host validatePassword does not lift the 72-byte limit of bcrypt; a host hash does', async () => {
    alternativeHandlers()
    defineAuthHandlers({ password: { validatePassword: () => true } })
    const long = 'y'.repeat(73)
    expect(await (await post('register', { email: 'host-policy@example.com', password: long })).json()).toMatchObject({ error: 'password_policy', message: 'Password does not meet the policy: needs at most 72 bytes' })
    defineAuthHandlers({ password: { hashPassword: pw => `plain:${pw}`, verifyPassword: (pw, hash) => hash === `plain:${pw}` } })
    expect((await post('register', { email: 'host-hash@example.com', password: long })).status).toBe(200)
  })

  it('a password not in NFC is tried in NFC, then as typed (older hashes), at the same cost known or unknown', async () => {
    const store = alternativeHandlers()
    const nfc = 'Crème-brûlée-42'
    await register(store, 'nfc@example.com', nfc.normalize('NFD'))
    // Stored from the NFC form.
    expect(store.users.get('nfc@example.com')!.hashedPassword).toMatch(/^\$2b\$04\$/)
    expect(await workOf('nfc@example.com', nfc.normalize('NFD'))).toEqual({ status: 200, work: 1 })
    expect(await workOf('nfc@example.com', nfc)).toEqual({ status: 200, work: 1 })
    const wrong = 'Crème-brûlée-43'.normalize('NFD')
    expect(await workOf('nfc@example.com', wrong)).toEqual({ status: 400, work: 2 })
    expect(await workOf('unknown-nfc@example.com', wrong)).toEqual({ status: 400, work: 2 })
    // A hash made from the NFD bytes before normalisation still verifies.
    const legacy = 'Ångström-77x'.normalize('NFD')
    store.users.set('legacy@example.com', { id: 'legacy', email: 'legacy@example.com', hashedPassword: await hash(legacy, { cost: 4 }) })
    expect(await workOf('legacy@example.com', legacy)).toEqual({ status: 200, work: 2 })
  })

  it('change refuses a current password longer than 72 bytes like a wrong one', async () => {
    const store = alternativeHandlers()
    const password = `Aa1-${'z'.repeat(68)}`
    await register(store, 'change-long@example.com', password)
    const { token: bearer } = await ctx.tokens.sign({ sub: 'id-change-long@example.com', email: 'change-long@example.com' })
    const change = (currentPassword: string) => fetch(`${base}/auth/password/change`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'authorization': `Bearer ${bearer}` },
      body: JSON.stringify({ currentPassword, newPassword: 'Marigold-77y' }),
    })
    expect(await (await change(`${password}tail`)).json()).toMatchObject({ error: 'current_password_incorrect' })
    expect((await change(password)).status).toBe(200)
  })
})

describe('verification links', () => {
  it('sendVerificationCode gets a ready link with the code and a flow id (relative without publicUrl)', async () => {
    const details: VerificationCodeDetails[] = []
    const store = alternativeHandlers()
    defineAuthHandlers({ password: { sendVerificationCode: (email, code, action, d) => {
      store.codes.push({ email, code, action })
      details.push(d)
    } } })
    await post('register', { email: 'link@example.com', password: 'Sunflower-42x' })
    const [d] = details
    const code = store.codes.at(-1)!.code
    expect(d!.link).toBe(`/auth/password/register-verify?code=${code}&flow=${d!.flow}`)
    expect(d!.expiresAt.getTime() - Date.now()).toBeGreaterThan(590_000)
    ctx.options.publicUrl = 'https://app.example.com'
    try {
      await post('register', { email: 'link2@example.com', password: 'Sunflower-42x' })
      expect(details.at(-1)!.link).toMatch(/^https:\/\/app\.example\.com\/auth\/password\/register-verify\?code=\d{6}&flow=[\w-]{22}$/)
    }
    finally {
      ctx.options.publicUrl = ''
    }
    const res = await post('register-verify', { code, flow: d!.flow })
    expect(res.status).toBe(200)
  })
})
