import type { ModuleOptions } from '../runtime/types/options'
import { coreRoutes, type ServerRoute } from './module-routes'

export type { ServerRoute }

/** The module's server endpoints at their configured paths (handler = file under src/runtime). */
export function serverRoutes(options: ModuleOptions): ServerRoute[] {
  const routes = coreRoutes(options.endpoints)
  const seen = new Map<string, string>()
  for (const r of routes) {
    const key = `${r.method} ${r.route}`
    const other = seen.get(key)
    if (other) throw new Error(`[svc-auth] svcAuth.endpoints: ${routeName(r.handler)} and ${routeName(other)} share ${key.toUpperCase()}`)
    seen.set(key, r.handler)
  }
  return routes
}

/** A handler's file name (`refresh.post`), as messages name a route. */
const routeName = (handler: string) => handler.slice(handler.lastIndexOf('/') + 1)
