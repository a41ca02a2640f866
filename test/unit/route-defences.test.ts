import { execFile } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createApp, toNodeListener } from 'h3'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { resolveOptions } from '../../src/build/options'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/handlers'
import { passwordRoutePath } from '../../src/runtime/server/lib/password/paths'
import { peekAuthContext } from '../../src/runtime/server/utils/context'
import type { PasswordUser } from '../../src/runtime/types/auth'
import type { ModuleOptions } from '../../src/runtime/types/options'
import { moduleRouter } from './helpers/module-router'

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

const MAX_BODY = 16 * 1024

let server: Server
let base = ''
let options: ModuleOptions
const users = new Map<string, PasswordUser>()
const codes: Array<{ email: string, code: string, action: string }> = []

beforeAll(async () => {
  options = resolveOptions({
    token: { secret: 'route-defences-secret-0123456789-abcdefghij' },
    tokenRefresh: { storage: { driver: 'memory' } },
    logging: { level: 'silent' },
    security: { maxBodySize: MAX_BODY },
    providers: {
      mock: { enableInProduction: true, mockUsers: [{ sub: 'mock-1', email: 'mock@example.com', name: 'Mock One' }] },
      password: { passwordHashRounds: 4 },
    },
  }, false)
  nitro.options = options
  const app = createApp()
  app.use(await moduleRouter(options))
  server = createServer(toNodeListener(app))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  nitro.base = base
  defineAuthHandlers({
    password: {
      findUser: email => users.get(email) ?? null,
      sendVerificationCode: (email, code, action) => void codes.push({ email, code, action }),
      onUserPersist: (email, hashedPassword) => {
        users.set(email, { id: `id-${email}`, email, hashedPassword })
        return { id: `id-${email}` }
      },
    },
  })
})

afterAll(async () => {
  resetAuthHandlers()
  server?.closeAllConnections()
  await new Promise(resolve => server?.close(resolve))
  await peekAuthContext()?.dispose()
})

const password = (path: string) => passwordRoutePath(options.endpoints.authPath, path)

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

  it('the rest of a refused body is read up to a bounded size only, then the connection is closed', async () => {
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
