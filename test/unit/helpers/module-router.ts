import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { createApp, createRouter, toNodeListener, type EventHandler, type Router } from 'h3'
import { afterAll, beforeAll } from 'vitest'
import { resetAuthHandlers } from '../../../src/runtime/server/lib/core/handlers'
import { peekAuthContext } from '../../../src/runtime/server/utils/auth-context'
import { nitro } from './nitro-stub'
import { auditAdminRoutes, auditRoutes, coreRoutes, identityRoutes, magicLinkRoutes, nativeRoutes, oauthRoutes, organizationRoutes, passkeyRoutes, passwordRoutes, twoFactorRoutes } from '../../../src/build/module-routes'
import type { ModuleOptions } from '../../../src/runtime/types/options'

export { memoryPasswordAccounts } from './password-app'

const ROUTES_DIR = join(import.meta.dirname, '..', '..', '..', 'src', 'runtime')

/**
 * A router with every endpoint the module registers for `options` (core, OAuth and the mock
 * provider, password, passkey, second factor, organizations, audit log), each served by its real route file, as Nitro
 * would mount them.
 */
export async function moduleRouter(options: ModuleOptions): Promise<Router> {
  const router = createRouter()
  const routes = [...coreRoutes(options.endpoints), ...oauthRoutes(options), ...passwordRoutes(options), ...passkeyRoutes(options), ...magicLinkRoutes(options), ...twoFactorRoutes(options), ...organizationRoutes(options), ...auditRoutes(options), ...auditAdminRoutes(options), ...nativeRoutes(options), ...identityRoutes(options)]
  for (const route of routes) {
    const handler = (await import(/* @vite-ignore */ join(ROUTES_DIR, `${route.handler}.ts`)) as { default: EventHandler }).default
    router[route.method](route.route, handler)
  }
  return router
}

/** {@link moduleRouter} served on a loopback port: the server and its base URL (`http://127.0.0.1:<port>`). */
export async function serveModule(options: ModuleOptions): Promise<{ server: Server, base: string }> {
  const app = createApp()
  app.use(await moduleRouter(options))
  const server = createServer(toNodeListener(app))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

/**
 * {@link serveModule} for the test file that calls it (at its top level; the file mocks `nitropack/runtime`
 * with nitro-stub.ts): served before its tests with `options()`, closed after them with the routes' auth
 * context and the host handlers. `base` is the served app's URL once its tests run.
 */
export function serveModuleForFile(options: () => ModuleOptions): { readonly base: string } {
  const served: { base: string, server?: Server } = { base: '' }
  beforeAll(async () => {
    nitro.options = options()
    Object.assign(served, await serveModule(nitro.options as ModuleOptions))
    nitro.base = served.base
  })
  afterAll(async () => {
    resetAuthHandlers()
    served.server?.closeAllConnections()
    await new Promise(resolve => served.server?.close(resolve))
    await peekAuthContext()?.dispose()
  })
  return served
}
