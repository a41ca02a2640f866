import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import type { Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect } from 'vitest'
import { CookieJar } from '../../helpers/cookie-jar'
import { resolveOptions } from '../../../src/build/resolve-options'
import { defineAuthHandlers, resetAuthHandlers } from '../../../src/runtime/server/lib/core/handlers'
import { passwordRoutePath } from '../../../src/runtime/password/password-paths'
import { peekAuthContext } from '../../../src/runtime/server/utils/auth-context'
import type { InvitationMessage } from '../../../src/runtime/organizations/organization-types'
import type { ModuleOptions, ModuleOptionsInput, RefreshStorageOptions } from '../../../src/runtime/types/options'
import { createTestAuth, type TestAuth } from '../../../src/testing/test-tokens'
import { deleteRedisKeys } from '../../support/redis-servers'
import { testRedisUrl } from '../../support/test-redis'
import { memoryPasswordAccounts, serveModule } from './module-router'
import { nitro } from './nitro-stub'

/** The drivers the organizations tests run on. */
export type OrganizationsDriver = 'memory' | 'fs' | 'redis'

/** Invitations per inviter per hour, and per organization per day, in the app's options. */
export const PER_INVITER = 40
export const PER_ORGANIZATION = 45

/** Storage on `driver` for one test file: an fs directory or a Redis key prefix of its own, and how to remove it. */
async function suiteStorage(driver: OrganizationsDriver): Promise<{ storage: Partial<RefreshStorageOptions>, cleanup: () => Promise<void> }> {
  if (driver === 'fs') {
    const base = await mkdtemp(join(tmpdir(), 'svc-auth-orgs-'))
    return { storage: { driver, base }, cleanup: () => rm(base, { recursive: true, force: true }) }
  }
  if (driver === 'redis') {
    const prefix = `svc-auth-test:${randomUUID()}:`
    return { storage: { driver, url: testRedisUrl(), prefix }, cleanup: () => deleteRedisKeys(prefix) }
  }
  return { storage: { driver }, cleanup: async () => {} }
}

/** One browser: its cookies, and JSON requests to the app as its own origin. */
export function browserOf(base: () => string) {
  const jar = new CookieJar()
  /** A request; `body` is sent as JSON, `raw` as it is (with a JSON content type). */
  const send = async (method: string, path: string, { body, raw, bearer }: { body?: unknown, raw?: string | ReadableStream<Uint8Array>, bearer?: string } = {}) => {
    const headers: Record<string, string> = { accept: 'application/json', cookie: jar.header() }
    if (body !== undefined || raw !== undefined) headers['content-type'] = 'application/json'
    if (bearer) headers.authorization = `Bearer ${bearer}`
    const payload = raw ?? (body === undefined ? undefined : JSON.stringify(body))
    const res = await fetch(`${base()}${path}`, { method, headers, body: payload, redirect: 'manual', ...(typeof payload === 'object' ? { duplex: 'half' } : {}) })
    jar.store(res)
    return res
  }
  return { jar, send }
}
export type Browser = ReturnType<typeof browserOf>

/** The JSON body of an answer, after checking its status (the body is in the failure message). */
export async function json<T>(res: Response, status = 200): Promise<T> {
  const body = await res.json() as T
  expect(res.status, JSON.stringify(body)).toBe(status)
  return body
}
export const errorOf = async (res: Response, status: number) => (await json<{ error: string }>(res, status)).error

/** A user: a browser with a password session (registered first when new), its token and `sub`. */
export interface OrgUser { b: Browser, token: string, sub: string, email: string }

/**
 * The organizations routes served in-process (a plain h3 app on a loopback port) with the store on `driver`,
 * password accounts in memory and the emailed invitations kept in `sent`, set up before and taken down after
 * the test file; with the helpers that log users in and call the routes. One call per test file: the file
 * mocks `nitropack/runtime` with helpers/nitro-stub.ts (the routes' one auth context comes from its options).
 * `more` adds option groups (or replaces these).
 */
export function organizationsApp(driver: OrganizationsDriver, more: ModuleOptionsInput = {}) {
  const PASSWORD = 'Sunflower-42x'
  let server: Server
  let base = ''
  let input: ModuleOptionsInput
  let options: ModuleOptions
  /** Tokens signed with the app's key without a login, for tests that need many users. */
  let testAuth: TestAuth
  let cleanup = async () => {}
  const { codes, handlers: passwordAccounts } = memoryPasswordAccounts()
  const browser = () => browserOf(() => base)
  const sent: InvitationMessage[] = []

  beforeAll(async () => {
    const place = await suiteStorage(driver)
    cleanup = place.cleanup
    input = {
      token: { secret: 'organizations-secret-0123456789-abcdefghij' },
      tokenRefresh: { storage: place.storage },
      logging: { level: 'silent' },
      providers: { password: { passwordHashRounds: 4 } },
      rateLimit: { enabled: false },
      organizations: {
        roles: { owner: ['*'], admin: ['org:read', 'org:update', 'member:*', 'invitation:*', 'team:*'], member: ['org:read', 'member:read', 'team:read'], writer: ['org:read', 'project:write'] },
        invitationsPerInviter: PER_INVITER,
        invitationsPerOrganization: PER_ORGANIZATION,
      },
      ...more,
    }
    options = resolveOptions(input, false)
    testAuth = await createTestAuth({ config: input, env: {} })
    nitro.options = options
    const served = await serveModule(options)
    server = served.server
    base = served.base
    nitro.base = base
    defineAuthHandlers({ password: passwordAccounts, organizations: { sendInvitation: message => void sent.push(message) } })
  })

  afterAll(async () => {
    resetAuthHandlers()
    server?.closeAllConnections()
    await new Promise(resolve => server?.close(resolve))
    await peekAuthContext()?.dispose()
    await testAuth?.dispose()
    await cleanup()
  })

  const password = (path: string) => passwordRoutePath(options.endpoints.authPath, path)
  const lastCode = (email: string, action: string) => codes.filter(c => c.email === email && c.action === action).at(-1)!.code

  async function register(b: Browser, email: string): Promise<void> {
    await json(await b.send('POST', password('register'), { body: { email, password: PASSWORD } }))
    await json(await b.send('POST', password('register-verify'), { body: { code: lastCode(email, 'register'), email } }))
  }

  async function logIn(email: string, b: Browser = browser()): Promise<OrgUser> {
    if (!passwordAccounts.findUser!(email)) await register(browser(), email)
    await json(await b.send('POST', password('login'), { body: { email, password: PASSWORD } }))
    const { redirect } = await json<{ redirect: string }>(await b.send('POST', password('login-verify'), { body: { code: lastCode(email, 'login'), email } }))
    const code = new URL(redirect, base).searchParams.get('code')!
    const { accessToken } = await json<{ accessToken: string }>(await b.send('POST', options.endpoints.tokenPath, { body: { code } }))
    return { b, token: accessToken, sub: `id-${email}`, email }
  }

  let n = 0
  const unique = (name: string) => `${name}-${++n}-${Math.random().toString(36).slice(2, 8)}@example.com`

  /** A refresh of `user`'s session, as the client does on 401 `session_stale`: the new token replaces the old. */
  async function refresh(user: OrgUser): Promise<void> {
    user.token = (await json<{ accessToken: string }>(await user.b.send('POST', options.endpoints.refreshPath, { body: {} }))).accessToken
  }

  /** `user`'s request under the auth path. */
  const call = (user: OrgUser, method: string, path: string, body?: unknown) => user.b.send(method, `/auth/${path}`, { body, bearer: user.token })

  async function createOrg(owner: OrgUser, name = 'Acme'): Promise<string> {
    const { organization } = await json<{ organization: { id: string } }>(await call(owner, 'POST', 'orgs', { name }), 201)
    return organization.id
  }

  /** Invites `email` as `role` and returns the emailed token. */
  async function invite(inviter: OrgUser, orgId: string, email: string, role = 'member'): Promise<string> {
    await json(await call(inviter, 'POST', `orgs/${orgId}/invitations`, { email, role }), 201)
    const message = sent.findLast(m => m.email === email)!
    return new URL(message.link, base).searchParams.get('token')!
  }

  async function join(inviter: OrgUser, orgId: string, role = 'member'): Promise<OrgUser> {
    const user = await logIn(unique('joiner'))
    const token = await invite(inviter, orgId, user.email, role)
    await json(await call(user, 'POST', 'invitations/accept', { token }))
    return user
  }

  const roleOf = async (viewer: OrgUser, orgId: string, userId: string) =>
    (await json<{ members: Array<{ userId: string, role: string }> }>(await call(viewer, 'GET', `orgs/${orgId}/members`))).members.find(m => m.userId === userId)?.role

  /** `n` users with tokens as POST /auth/token issues them, signed without a login (no session behind them: no refresh). */
  function mintUsers(n: number, name: string): Promise<OrgUser[]> {
    return Promise.all(Array.from({ length: n }, async () => {
      const email = unique(name)
      const sub = `id-${email}`
      return { b: browser(), token: (await testAuth.mint({ sub, email }, { provider: 'password' })).token, sub, email }
    }))
  }

  return {
    /** The served app's base URL (set before the tests run). */
    get base() {
      return base
    },
    /** The resolved module options (set before the tests run). */
    get options() {
      return options
    },
    codes, passwordAccounts, sent, browser, password, register, logIn, unique, refresh, call, createOrg, invite, join, roleOf, mintUsers,
  }
}
