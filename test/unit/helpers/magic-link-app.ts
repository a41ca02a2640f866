import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, vi } from 'vitest'
import { CookieJar } from '../../helpers/cookie-jar'
import { resolveOptions } from '../../../src/build/resolve-options'
import { defineAuthHandlers } from '../../../src/runtime/server/lib/core/handlers'
import { peekAuthContext } from '../../../src/runtime/server/utils/auth-context'
import { magicLinkRoutePath } from '../../../src/runtime/magic-link/magic-link-paths'
import type { AuthUser, PasswordUser } from '../../../src/runtime/types/auth'
import type { ModuleOptionsInput, RefreshStorageOptions } from '../../../src/runtime/types/options'
import { deleteRedisKeys } from '../../support/redis-servers'
import { testRedisUrl } from '../../support/test-redis'
import { serveModuleForFile } from './module-router'
import { nitro } from './nitro-stub'

export type MagicLinkDriver = 'memory' | 'fs' | 'redis'

/** A sent message: the address, the action and the link. */
export interface SentLink { email: string, action: string, code: string, link: string }

/** Accounts of the host (by email), messages it sent, accounts `onUserPersist` stored, and lookups held back. */
export interface MagicLinkHost {
  users: Map<string, PasswordUser>
  sent: SentLink[]
  persisted: Array<{ user: AuthUser, provider: string }>
  /** When set, `findUser` waits for it (the answer must not). */
  gate?: Promise<void>
  lookups: string[]
}

/**
 * The module's routes served in-process with `providers.magicLink` and the store on `driver` (an fs directory or a
 * Redis prefix of its own), accounts kept in memory, rate limits per client address (`x-forwarded-for` from
 * loopback is believed). One call per test file, which mocks `nitropack/runtime` with nitro-stub.ts.
 */
export function magicLinkApp(driver: MagicLinkDriver, more: ModuleOptionsInput = {}) {
  let storage: Partial<RefreshStorageOptions> = { driver: 'memory' }
  let cleanup = async () => {}
  const host: MagicLinkHost = { users: new Map(), sent: [], persisted: [], lookups: [] }
  beforeAll(async () => {
    if (driver === 'fs') {
      const base = await mkdtemp(join(tmpdir(), 'svc-auth-magic-'))
      storage = { driver, base }
      cleanup = () => rm(base, { recursive: true, force: true })
    }
    if (driver === 'redis') {
      const prefix = `svc-auth-test:${randomUUID()}:`
      storage = { driver, url: testRedisUrl(), prefix }
      cleanup = () => deleteRedisKeys(prefix)
    }
  })
  const served = serveModuleForFile(() => resolveOptions({
    token: { secret: 'magic-link-secret-0123456789-abcdefghijklm' },
    tokenRefresh: { storage },
    logging: { level: 'silent' },
    publicUrl: 'https://app.example.com',
    rateLimit: { trustedProxies: ['127.0.0.1'], magicLink: { perIp: 6, perEmail: 3, window: 3600 }, verify: { perIp: 200, perEmail: 0, window: 900 } },
    providers: { password: { passwordHashRounds: 4 }, magicLink: {} },
    ...more,
  }, false))
  beforeAll(() => {
    defineAuthHandlers({
      password: {
        findUser: async (email) => {
          host.lookups.push(email)
          await host.gate
          return host.users.get(email) ?? null
        },
        sendVerificationCode: (email, code, action, details) => void host.sent.push({ email, code, action, link: details.link }),
      },
      onUserPersist: (user, { provider }) => {
        host.persisted.push({ user, provider })
        const email = String(user.email)
        if (!host.users.has(email)) host.users.set(email, { id: `new-${email}`, email })
        return { id: host.users.get(email)!.id }
      },
    })
  })
  afterAll(() => cleanup())

  let addresses = 0
  /** A browser with a client address of its own (each browser's rate limits are its own). */
  function browser(address = `10.1.${Math.floor(++addresses / 250)}.${addresses % 250}`) {
    const jar = new CookieJar()
    const send = async (method: string, path: string, body?: unknown, bearer?: string) => {
      const headers: Record<string, string> = { 'accept': 'application/json', 'cookie': jar.header(), 'x-forwarded-for': address, ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) }
      if (body !== undefined) headers['content-type'] = 'application/json'
      const res = await fetch(`${served.base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), redirect: 'manual' })
      jar.store(res)
      return res
    }
    const route = (path?: string) => magicLinkRoutePath('/auth', path)
    return {
      jar,
      send,
      /** POST /auth/magic-link. */
      ask: (email: string, redirect?: string) => send('POST', route(), { email, redirect }),
      /** The link's page POST. */
      redeem: (token: string, thisDevice?: boolean) => send('POST', route('redeem'), { token, thisDevice }),
      /** The short code, typed in this browser. */
      enterCode: (email: string, code: string) => send('POST', route('code'), { email, code }),
      /** Exchanges the code of a login's `redirect` at POST /auth/token: the access token's claims (and the token, `raw`). */
      async exchange(redirect: string): Promise<Record<string, unknown> & { raw: string }> {
        const code = new URL(redirect, served.base).searchParams.get('code')!
        const { accessToken } = await json<{ accessToken: string }>(await send('POST', '/auth/token', { code }))
        return { ...JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>, raw: accessToken }
      },
    }
  }

  let accounts = 0
  /** A new account (no password: magic links only) and its address. */
  function account(fields: Partial<PasswordUser> = {}): string {
    const email = `user-${++accounts}-${randomUUID().slice(0, 8)}@example.com`
    host.users.set(email, { id: `id-${email}`, email, ...fields })
    return email
  }

  /** The token of the last link sent to `email`, once it is sent. */
  async function linkOf(email: string): Promise<string> {
    await vi.waitFor(() => expect(host.sent.some(m => m.email === email)).toBe(true))
    const { link } = host.sent.filter(m => m.email === email).at(-1)!
    return new URLSearchParams(new URL(link).hash.slice(1)).get('token')!
  }

  return { served, host, browser, account, linkOf, ctx: () => peekAuthContext()!, nitro }
}

export type MagicLinkBrowser = ReturnType<ReturnType<typeof magicLinkApp>['browser']>

/** The JSON body of an answer, after checking its status (the body is in the failure message). */
export async function json<T>(res: Response, status = 200): Promise<T> {
  const body = await res.json() as T
  expect(res.status, JSON.stringify(body)).toBe(status)
  return body
}

export const errorOf = async (res: Response, status: number) => (await json<{ error: string }>(res, status)).error
