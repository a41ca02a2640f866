import { createServer, type Server } from 'node:http'
import { createApp, createRouter, defineEventHandler, setResponseHeader, toNodeListener, type H3Event } from 'h3'
import { CookieJar } from '../../helpers/cookie-jar'
import { resolveOptions } from '../../../src/build/resolve-options'
import { features } from './features'
import { createAuthContext, type AuthContext, type HookCaller } from '../../../src/runtime/server/lib/core/context'
import { createStoreBackend } from '../../../src/runtime/server/lib/store'
import { sendAuthError } from '../../../src/runtime/server/lib/edge/errors'
import { defineAuthHandlers } from '../../../src/runtime/server/lib/core/handlers'
import { authenticationOptions, authenticationVerify } from '../../../src/runtime/passkey/server/passkey-login'
import { deletePasskey, listPasskeys } from '../../../src/runtime/passkey/server/manage'
import { registrationOptions, registrationVerify } from '../../../src/runtime/passkey/server/passkey-registration'
import { limitRequestBody } from '../../../src/runtime/server/lib/edge/request-guards'
import type { ModuleOptionsInput } from '../../../src/runtime/types/options'
import type { PasskeyCredential, PasskeyHandlerContext, PasskeyHandlers } from '../../../src/runtime/passkey/passkey-types'

/** The host's passkey table of a test: credentials by id, users by email. */
export interface HostStore {
  credentials: Map<string, PasskeyCredential>
  users: Map<string, { id: string, email: string, name: string }>
  /** Every credential saveCredential received, in order. */
  saved: PasskeyCredential[]
  /** The `created` flag of each of those saves. */
  created: boolean[]
}

export interface PasskeyTestApp {
  ctx: AuthContext
  base: string
  host: HostStore
  hooks: Array<{ name: string, payload: unknown }>
  /** Every live key of the store and its stored (raw) value. */
  dump(): Promise<Array<[string, string]>>
  close(): Promise<void>
}

/**
 * The passkey flows on a plain h3 app (no Nuxt) as the routes wire them (body limit, JSON errors),
 * with a memory store and the host handlers over an in-memory table.
 */
export async function startPasskeyApp(input: ModuleOptionsInput = {}, { dev = false }: { dev?: boolean } = {}): Promise<PasskeyTestApp> {
  const hooks: PasskeyTestApp['hooks'] = []
  const callHook: HookCaller = async (name, payload) => {
    hooks.push({ name, payload })
  }
  const options = resolveOptions({
    token: { secret: 'passkey-unit-secret-0123456789-abcdefghijk' },
    tokenRefresh: { storage: { driver: 'memory' } },
    logging: { level: 'silent' },
    rateLimit: { enabled: false },
    publicUrl: 'https://app.example.com',
    providers: { passkey: {} },
    ...input,
  }, true)
  const backend = await createStoreBackend(options.tokenRefresh.storage)
  const ctx = await createAuthContext(options, { dev, callHook, backend, features })
  const host: HostStore = { credentials: new Map(), users: new Map(), saved: [], created: [] }
  defineAuthHandlers({ passkey: HOST_HANDLERS })
  const router = createRouter()
  const wrap = (flow: (event: H3Event) => Promise<unknown>) => defineEventHandler(async (event) => {
    try {
      event.context[HOST] = host
      setResponseHeader(event, 'cache-control', 'no-store')
      await limitRequestBody(event, ctx.options.security.maxBodySize)
      return await flow(event)
    }
    catch (error) {
      return sendAuthError(event, error)
    }
  })
  router.post('/auth/passkey/register/options', wrap(event => registrationOptions(ctx, event)))
  router.post('/auth/passkey/register/verify', wrap(event => registrationVerify(ctx, event)))
  router.post('/auth/passkey/login/options', wrap(event => authenticationOptions(ctx, event)))
  router.post('/auth/passkey/login/verify', wrap(event => authenticationVerify(ctx, event)))
  router.get('/auth/passkey/credentials', wrap(event => listPasskeys(ctx, event)))
  router.delete('/auth/passkey/credentials/:id', wrap(event => deletePasskey(ctx, event)))
  const app = createApp()
  app.use(router)
  const server: Server = createServer(toNodeListener(app))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  return {
    ctx,
    base,
    host,
    hooks,
    async dump() {
      const keys = await backend.keys('')
      return Promise.all(keys.map(async key => [key, (await backend.get(key)) ?? ''] as [string, string]))
    },
    async close() {
      await new Promise(resolve => server.close(resolve))
      await ctx.dispose()
    },
  }
}

const HOST = 'passkeyTestHost'

/** The table of the app that answers the request (several apps may run in one test file). */
const hostOf = (context: PasskeyHandlerContext): HostStore => context.event.context[HOST] as HostStore

/** The host handlers of the tests, over the table of the app answering. */
export const HOST_HANDLERS: PasskeyHandlers = {
  findCredential: (id, context) => hostOf(context).credentials.get(id) ?? null,
  listCredentials: (userId, context) => [...hostOf(context).credentials.values()].filter(c => c.userId === userId),
  saveCredential: (credential, context) => {
    hostOf(context).saved.push(structuredClone(credential))
    hostOf(context).created.push(context.created)
    hostOf(context).credentials.set(credential.id, structuredClone(credential))
  },
  deleteCredential: (id, _userId, context) => {
    hostOf(context).credentials.delete(id)
  },
  findUserIdByEmail: (email, context) => hostOf(context).users.get(email)?.id ?? null,
  findUser: (id, context) => [...hostOf(context).users.values()].find(u => u.id === id) ?? null,
}

/** An answer: status and parsed JSON body. */
export interface Answer<T = Record<string, unknown>> {
  status: number
  body: T
}

/** A browser of the tests: its own cookies (the code-binding cookie), an optional bearer token. */
export class TestBrowser {
  readonly cookies = new CookieJar()

  constructor(private readonly base: string, public token?: string) {}

  async request<T = Record<string, unknown>>(method: string, path: string, body?: unknown, init: { raw?: string, headers?: Record<string, string> } = {}): Promise<Answer<T>> {
    const headers: Record<string, string> = { ...init.headers }
    if (body !== undefined || init.raw !== undefined) headers['content-type'] = 'application/json'
    if (this.token) headers.authorization = `Bearer ${this.token}`
    if (this.cookies.size) headers.cookie = this.cookies.header()
    const response = await fetch(this.base + path, { method, headers, body: init.raw ?? (body === undefined ? undefined : JSON.stringify(body)) })
    this.cookies.store(response)
    const text = await response.text()
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as T }
  }

  post<T = Record<string, unknown>>(path: string, body?: unknown, init?: { raw?: string, headers?: Record<string, string> }): Promise<Answer<T>> {
    return this.request<T>('POST', path, body, init)
  }
}
