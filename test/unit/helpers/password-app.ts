/** The password flows on a plain h3 app (no Nuxt, no Nitro), and password accounts kept in memory. */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createApp, createRouter, defineEventHandler, toNodeListener, type H3Event } from 'h3'
import { resolveOptions } from '../../../src/build/resolve-options'
import { createAuthContext, type AuthContext } from '../../../src/runtime/server/lib/core/context'
import { sendAuthError } from '../../../src/runtime/server/lib/edge/errors'
import type { PasswordProviderOptions } from '../../../src/runtime/password/password-types'
import type { PasswordHandlers, PasswordUser } from '../../../src/runtime/types/host-handlers'
import { features } from './features'

/**
 * Password accounts kept in memory, and the codes sent to them: `handlers` are the host's
 * `password` handlers over them (an account's id is `id-<email>`).
 */
export function memoryPasswordAccounts() {
  const users = new Map<string, PasswordUser>()
  const codes: Array<{ email: string, code: string, action: string, link: string }> = []
  const handlers: PasswordHandlers = {
    findUser: email => users.get(email) ?? null,
    sendVerificationCode: (email, code, action, details) => void codes.push({ email, code, action, link: details.link }),
    onUserPersist: (email, hashedPassword) => {
      users.set(email, { id: `id-${email}`, email, hashedPassword })
      return { id: `id-${email}` }
    },
  }
  return { users, codes, handlers }
}

type Flow = (ctx: AuthContext, event: H3Event) => Promise<unknown>

/**
 * `flows` (by path under `/auth/password/`) served on a loopback port over an auth context of their own:
 * memory store, no rate limits, bcrypt cost 4 and the provider options `password`.
 */
export async function servePasswordFlows(password: PasswordProviderOptions, flows: Record<string, unknown>): Promise<{ ctx: AuthContext, base: string, close: () => Promise<void> }> {
  const ctx = await createAuthContext(resolveOptions({
    token: { secret: 'password-app-secret-0123456789-abcdefghijkl' },
    tokenRefresh: { storage: { driver: 'memory' } },
    logging: { level: 'silent' },
    rateLimit: { enabled: false },
    providers: { password: { passwordHashRounds: 4, ...password } },
  }, true), { features })
  const router = createRouter()
  for (const [path, flow] of Object.entries(flows)) {
    router.use(`/auth/password/${path}`, defineEventHandler(async (event) => {
      try {
        return await (flow as Flow)(ctx, event)
      }
      catch (error) {
        return sendAuthError(event, error)
      }
    }))
  }
  const app = createApp()
  app.use(router)
  const server: Server = createServer(toNodeListener(app))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return {
    ctx,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections()
      await new Promise(resolve => server.close(resolve))
      await ctx.dispose()
    },
  }
}
