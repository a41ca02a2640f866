import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createApp, createRouter, defineEventHandler, toNodeListener } from 'h3'
import type { AuthContext } from '../../../src/runtime/server/lib/core/context'
import { handleOAuthRequest, type OAuthRequestOptions } from '../../../src/runtime/oauth/server/oauth-flow'

/** An app on a loopback port that serves `GET /auth/:name` with the login flow. */
export interface OAuthApp {
  /** `http://127.0.0.1:<port>`. */
  base: string
  close(): Promise<void>
}

/**
 * Starts {@link OAuthApp}. `requestOptions` is read on every request, so a test may change the
 * handlers or the provider fetch between logins.
 */
export async function startOAuthApp(ctx: AuthContext, requestOptions: () => Omit<OAuthRequestOptions, 'name'>): Promise<OAuthApp> {
  const app = createApp()
  const router = createRouter()
  router.get('/auth/:name', defineEventHandler(event => handleOAuthRequest(event, ctx, { ...requestOptions(), name: event.context.params!.name! })))
  app.use(router)
  const server = createServer(toNodeListener(app))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', () => resolve()))
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>(resolve => server.close(() => resolve())),
  }
}
