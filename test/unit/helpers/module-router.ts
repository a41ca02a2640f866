import { join } from 'node:path'
import { createRouter, type EventHandler, type Router } from 'h3'
import { coreRoutes, oauthRoutes, passkeyRoutes, passwordRoutes, twoFactorRoutes } from '../../../src/runtime/server/lib/module-routes'
import type { ModuleOptions } from '../../../src/runtime/types/options'

const ROUTES_DIR = join(import.meta.dirname, '..', '..', '..', 'src', 'runtime', 'server', 'routes')

/**
 * A router with every endpoint the module registers for `options` (core, OAuth and the mock
 * provider, password, passkey, second factor), each served by its real route file, as Nitro
 * would mount them.
 */
export async function moduleRouter(options: ModuleOptions): Promise<Router> {
  const router = createRouter()
  const routes = [...coreRoutes(options.endpoints), ...oauthRoutes(options), ...passwordRoutes(options), ...passkeyRoutes(options), ...twoFactorRoutes(options)]
  for (const route of routes) {
    const handler = (await import(/* @vite-ignore */ join(ROUTES_DIR, `${route.handler}.ts`)) as { default: EventHandler }).default
    router[route.method](route.route, handler)
  }
  return router
}
