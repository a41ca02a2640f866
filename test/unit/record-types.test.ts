import type { Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { CookieJar } from '../helpers/cookie-jar'
import { resolveOptions } from '../../src/build/resolve-options'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { TOTP } from 'otpauth'
import { memoryPasswordAccounts, serveModule } from './helpers/module-router'
import { passwordRoutePath } from '../../src/runtime/password/password-paths'
import { underPath } from '../../src/runtime/shared/paths'
import type { PasskeyCredential } from '../../src/runtime/passkey/passkey-types'
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import { SoftAuthenticator } from './helpers/webauthn'
import { RECORD_DECLARATIONS, RECORD_TYPES } from './helpers/record-types'
import { startOidcProvider, type FakeProvider } from './helpers/fake-provider'
import { BACKCHANNEL_LOGOUT_EVENT } from '../../src/runtime/oauth/server/backchannel-logout'
import type { StoreBackend } from '../../src/runtime/server/lib/store/types'
import { peekAuthContext } from '../../src/runtime/server/utils/auth-context'
import type { TwoFactorState } from '../../src/runtime/types/auth'
import type { ModuleOptions } from '../../src/runtime/types/options'

// The module's real endpoints on a plain h3 app: Nitro's runtime is these two functions.
const nitro = vi.hoisted(() => ({ options: undefined as unknown, base: '' }))
vi.mock('nitropack/runtime', () => ({
  useRuntimeConfig: () => ({ svcAuth: nitro.options }),
  useNitroApp: () => ({
    hooks: { callHook: async () => {} },
    localFetch: (path: string, init: RequestInit) => fetch(`${nitro.base}${path}`, init),
  }),
}))

// Every key the store writes, whatever writes it.
const storage = vi.hoisted(() => ({ written: new Set<string>(), backend: undefined as StoreBackend | undefined }))
vi.mock('../../src/runtime/server/lib/store/memory', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/runtime/server/lib/store/memory')>()
  return {
    createMemoryBackend: (): StoreBackend => {
      const backend = original.createMemoryBackend()
      const note = <A extends unknown[], R>(write: (key: string, ...rest: A) => Promise<R>) => (key: string, ...rest: A): Promise<R> => {
        storage.written.add(key)
        return write(key, ...rest)
      }
      storage.backend = {
        ...backend,
        set: note(backend.set),
        setIfAbsent: note(backend.setIfAbsent),
        incr: note(backend.incr),
        mapSet: note(backend.mapSet),
        commit: (op) => {
          for (const key of [op.claim.key, ...op.copies, ...op.mapCopies.map(copy => copy.key)]) storage.written.add(key)
          return backend.commit(op)
        },
      }
      return storage.backend
    },
  }
})

const PREFIX = 'refresh:'
const PASSWORD = 'Sunflower-42x'

/** The record type a storage key belongs to: `<prefix><type>` or `<prefix><type>:…`. */
function recordTypeOf(key: string): string {
  expect(key.startsWith(PREFIX), key).toBe(true)
  return key.slice(PREFIX.length).split(':')[0]!
}

let server: Server
let base = ''
let options: ModuleOptions
const { codes, handlers: passwordAccounts } = memoryPasswordAccounts()
const twoFactorStates = new Map<string, TwoFactorState>()

/** One browser: its cookies, and requests to the app. */
function browser() {
  const jar = new CookieJar()
  const request = async (method: string, path: string, { body, bearer }: { body?: unknown, bearer?: string } = {}) => {
    const headers: Record<string, string> = { accept: 'application/json', cookie: jar.header() }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (bearer) headers.authorization = `Bearer ${bearer}`
    const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), redirect: 'manual' })
    jar.store(res)
    return res
  }
  return {
    get: (path: string, bearer?: string) => request('GET', path, { bearer }),
    post: (path: string, body?: unknown, bearer?: string) => request('POST', path, { body: body ?? {}, bearer }),
    delete: (path: string, bearer?: string) => request('DELETE', path, { bearer }),
  }
}

type Browser = ReturnType<typeof browser>

const json = async <T>(res: Response, status = 200): Promise<T> => {
  const body = await res.json() as T
  expect(res.status, JSON.stringify(body)).toBe(status)
  return body
}

const password = (path: string) => passwordRoutePath(options.endpoints.authPath, path)

/** The authorization code of a login answer or redirect, exchanged for an access token. */
async function exchange(b: Browser, code: string): Promise<string> {
  return (await json<{ accessToken: string }>(await b.post(options.endpoints.tokenPath, { code }))).accessToken
}

/** The code of the last email sent for `action`. */
const lastCode = (action: string) => codes.filter(c => c.action === action).at(-1)!

let oidc: FakeProvider

beforeAll(async () => {
  oidc = await startOidcProvider('op', 'oidc-client')
  oidc.change.claims = { sid: 'op-session' }
  options = resolveOptions({
    token: { secret: 'record-types-secret-0123456789-abcdefghijkl' },
    tokenRefresh: { storage: { driver: 'memory' } },
    logging: { level: 'silent' },
    impersonation: { enabled: true },
    providers: {
      mock: { enableInProduction: true, mockUsers: [{ sub: 'mock-1', email: 'mock@example.com', name: 'Mock One' }] },
      password: { passwordHashRounds: 4 },
      passkey: {},
      magicLink: {},
      custom: { oidc: { clientId: 'oidc-client', clientSecret: 'oidc-client-secret', issuer: oidc.issuer } },
    },
    twoFactor: { enabled: true },
    organizations: {},
  }, false)
  nitro.options = options
  const served = await serveModule(options)
  server = served.server
  base = served.base
  nitro.base = base
  // Passkeys are signed for the app's origin (the context is made at the first request).
  options.providers.passkey = { origins: [base] }

  defineAuthHandlers({
    organizations: { sendInvitation: message => void invitations.push(message.link) },
    password: passwordAccounts,
    impersonation: {
      canImpersonate: () => true,
      fetchTarget: id => ({ sub: id, email: `${id}@example.com` }),
    },
    twoFactor: {
      find: userId => twoFactorStates.get(userId) ?? null,
      save: (userId, state) => void (state ? twoFactorStates.set(userId, state) : twoFactorStates.delete(userId)),
    },
    passkey: {
      findCredential: id => passkeys.get(id) ?? null,
      listCredentials: userId => [...passkeys.values()].filter(c => c.userId === userId),
      saveCredential: (credential) => {
        passkeys.set(credential.id, credential)
      },
    },
  })
})

const passkeys = new Map<string, PasskeyCredential>()
const invitations: string[] = []

afterAll(async () => {
  resetAuthHandlers()
  await new Promise(resolve => server?.close(resolve))
  await peekAuthContext()?.dispose()
  await oidc?.close()
})

describe('record types', () => {
  it('have unique names', () => {
    const names = RECORD_DECLARATIONS.flatMap(declared => Object.values(declared))
    expect(new Set(names).size).toBe(names.length)
    for (const name of names) expect(name).toMatch(/^[a-z]+(?:-[a-z]+)*$/)
  })

  it('are every namespace a whole login, refresh, password, passkey and session flow stores, and each is used', async () => {
    // Provider login with the mock provider, then the token exchange, refreshes and sessions.
    const b = browser()
    const start = await b.get(`${options.endpoints.loginPath.replace(/\/+$/, '')}/mock`)
    expect(start.status).toBe(302)
    const atProvider = await b.get(start.headers.get('location')!)
    expect(atProvider.status).toBe(302)
    const back = await b.get(atProvider.headers.get('location')!)
    const callback = new URL(back.headers.get('location')!, base)
    expect(callback.pathname).toBe(options.endpoints.callbackPath)
    let token = await exchange(b, callback.searchParams.get('code')!)
    token = (await json<{ accessToken: string }>(await b.post(options.endpoints.refreshPath))).accessToken
    token = (await json<{ accessToken: string }>(await b.post(options.endpoints.refreshPath))).accessToken
    expect((await json<{ sessions: unknown[] }>(await b.get(options.endpoints.sessionsPath, token))).sessions).toHaveLength(1)

    // Passkey: registered by the logged-in user, then a login with it.
    const passkeyPath = (path: string) => underPath(options.endpoints.authPath, 'passkey', path)
    const authenticator = new SoftAuthenticator({ origin: base, rpID: '127.0.0.1' })
    const creation = await json<PublicKeyCredentialCreationOptionsJSON>(await b.post(passkeyPath('register/options'), {}, token))
    await json(await b.post(passkeyPath('register/verify'), { response: authenticator.register(creation) }, token))
    const k = browser()
    const request = await json<PublicKeyCredentialRequestOptionsJSON>(await k.post(passkeyPath('login/options'), {}))
    const passkeyLogin = await json<{ redirect: string }>(await k.post(passkeyPath('login/verify'), { response: authenticator.assert(request) }))
    await exchange(k, new URL(passkeyLogin.redirect, base).searchParams.get('code')!)

    // Impersonation, there and back.
    const impersonated = (await json<{ accessToken: string }>(await b.post(options.endpoints.impersonatePath, { targetUserId: 'target-1', reason: 'support' }, token))).accessToken
    token = (await json<{ accessToken: string }>(await b.post(options.endpoints.unimpersonatePath, {}, impersonated))).accessToken

    // Password: register (code only), login (with the email), a wrong code, reset (by flow), change.
    const p = browser()
    const email = 'pat@example.com'
    await json(await p.post(password('register'), { email, password: PASSWORD }))
    await json(await p.post(password('register-verify'), { code: lastCode('register').code }))
    await json(await p.post(password('login'), { email, password: PASSWORD }))
    const loginCode = lastCode('login').code
    await json(await p.post(password('login-verify'), { code: String((Number(loginCode) + 1) % 1_000_000).padStart(6, '0'), email }), 400)
    const login = await json<{ redirect: string }>(await p.post(password('login-verify'), { code: loginCode, email }))
    const passwordToken = await exchange(p, new URL(login.redirect, base).searchParams.get('code')!)

    // Magic link: asked for in one browser, opened in another, its short code typed where it was asked for.
    const m = browser()
    await json(await m.post(`${options.endpoints.authPath}/magic-link`, { email }))
    await vi.waitFor(() => expect(lastCode('magic_link')).toBeDefined())
    const linkToken = new URLSearchParams(new URL(lastCode('magic_link').link, base).hash.slice(1)).get('token')
    const { code: shortCode } = await json<{ code: string }>(await browser().post(`${options.endpoints.authPath}/magic-link/redeem`, { token: linkToken }))
    const linked = await json<{ redirect: string }>(await m.post(`${options.endpoints.authPath}/magic-link/code`, { email, code: shortCode }))
    await exchange(m, new URL(linked.redirect, base).searchParams.get('code')!)

    // Organizations: one created, a team, an invitation accepted by the password user, an active organization.
    const orgs = (path: string) => `${options.endpoints.authPath}/orgs${path}`
    const { organization } = await json<{ organization: { id: string } }>(await b.post(orgs(''), { name: 'Acme' }, token), 201)
    await json(await b.post(orgs(`/${organization.id}/teams`), { name: 'Core' }, token), 201)
    await json(await b.post(orgs(`/${organization.id}/invitations`), { email, role: 'member' }, token), 201)
    await json(await p.post(`${options.endpoints.authPath}/invitations/accept`, { token: new URL(invitations.at(-1)!, base).searchParams.get('token') }, passwordToken))
    await json(await p.post(orgs('/active'), { orgId: organization.id }, passwordToken))
    await json(await p.post(password('reset-request'), { email }))
    await vi.waitFor(() => expect(lastCode('reset')).toBeDefined())
    const { sessionId } = await json<{ sessionId: string }>(await p.post(password('reset-verify'), { code: lastCode('reset').code, email }))
    await json(await p.post(password('reset-complete'), { sessionId, newPassword: `${PASSWORD}-new` }))
    const after = browser()
    await json(await after.post(password('login'), { email, password: `${PASSWORD}-new` }))
    const relogin = await json<{ redirect: string }>(await after.post(password('login-verify'), { code: lastCode('login').code, email }))
    const fresh = await exchange(after, new URL(relogin.redirect, base).searchParams.get('code')!)
    await json(await after.post(password('change'), { currentPassword: `${PASSWORD}-new`, newPassword: `${PASSWORD}-2` }, fresh))
    expect(passwordToken).not.toBe(fresh)

    // Second factor: enrol, then a login with a wrong code and a recovery code.
    const twoFactor = (path: string) => `${options.endpoints.authPath}/two-factor/${path}`
    const { secret } = await json<{ secret: string }>(await after.post(twoFactor('enrol'), {}, fresh))
    const { recoveryCodes } = await json<{ recoveryCodes: string[] }>(await after.post(twoFactor('confirm'), { code: new TOTP({ secret }).generate() }, fresh))
    const second = browser()
    await json(await second.post(password('login'), { email, password: `${PASSWORD}-2` }))
    const challenged = await json<{ redirect: string }>(await second.post(password('login-verify'), { code: lastCode('login').code, email }))
    const flow = new URL(challenged.redirect, base).searchParams.get('flow')!
    await json(await second.post(twoFactor('verify'), { flow, code: 'abcdef' }), 400)
    const verified = await json<{ redirect: string }>(await second.post(twoFactor('verify'), { flow, recoveryCode: recoveryCodes[0] }))
    await exchange(second, new URL(verified.redirect, base).searchParams.get('code')!)

    // Logout.
    await json(await b.post(options.endpoints.logoutPath))

    // An OpenID provider's login, ended by its back-channel logout.
    const o = browser()
    const atOp = await fetch((await o.get(`${options.endpoints.loginPath.replace(/\/+$/, '')}/oidc`)).headers.get('location')!, { redirect: 'manual' })
    const opCallback = new URL(atOp.headers.get('location')!)
    const opBack = new URL((await o.get(`${opCallback.pathname}${opCallback.search}`)).headers.get('location')!, base)
    await exchange(o, opBack.searchParams.get('code')!)
    const now = Math.floor(Date.now() / 1000)
    const logoutToken = await oidc.sign({ iss: oidc.issuer, aud: 'oidc-client', iat: now, jti: 'jti-1', sid: 'op-session', events: { [BACKCHANNEL_LOGOUT_EVENT]: {} } })
    const ended = await fetch(`${base}${options.endpoints.authPath}/backchannel-logout/oidc`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ logout_token: logoutToken }) })
    expect(ended.status).toBe(200)

    const written = [...storage.written].map(recordTypeOf)
    const stored = (await storage.backend!.keys('')).map(recordTypeOf)
    const known = new Set<string>(Object.values(RECORD_TYPES))
    expect([...new Set([...written, ...stored])].filter(type => !known.has(type))).toEqual([])
    expect([...known].filter(type => !written.includes(type))).toEqual([])
  })
})
