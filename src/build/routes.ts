import type { ModuleOptions } from '../runtime/types/options'
import { coreRoutes, type ServerRoute } from '../runtime/server/lib/module-routes'

export type { ServerRoute }

/** The module's server endpoints at their configured paths (handler = file under runtime/server/routes). */
export function serverRoutes(options: ModuleOptions): ServerRoute[] {
  const routes = coreRoutes(options.endpoints)
  const seen = new Map<string, string>()
  for (const r of routes) {
    const key = `${r.method} ${r.route}`
    const other = seen.get(key)
    if (other) throw new Error(`[nuxt-svc-auth] svcAuth.endpoints: ${r.handler} and ${other} share ${key.toUpperCase()}`)
    seen.set(key, r.handler)
  }
  return routes
}
