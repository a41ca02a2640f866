import type { ModuleOptions } from '../runtime/types/options'

export interface ServerRoute {
  route: string
  method: 'get' | 'post' | 'delete'
  handler: string
}

/** The module's server endpoints at their configured paths (handler = file under runtime/server/routes). */
export function serverRoutes(options: ModuleOptions): ServerRoute[] {
  const e = options.endpoints
  const routes: ServerRoute[] = [
    { route: e.tokenPath, method: 'post', handler: 'token.post' },
    { route: e.refreshPath, method: 'post', handler: 'refresh.post' },
    { route: e.logoutPath, method: 'post', handler: 'logout.post' },
    { route: e.userInfoPath, method: 'get', handler: 'me.get' },
    { route: e.jwksPath, method: 'get', handler: 'jwks.get' },
    { route: e.impersonatePath, method: 'post', handler: 'impersonate.post' },
    { route: e.unimpersonatePath, method: 'post', handler: 'unimpersonate.post' },
    { route: e.sessionsPath, method: 'get', handler: 'sessions/list.get' },
    { route: `${e.sessionsPath.replace(/\/$/, '')}/revoke-others`, method: 'post', handler: 'sessions/revoke-others.post' },
    { route: `${e.sessionsPath.replace(/\/$/, '')}/:id`, method: 'delete', handler: 'sessions/revoke.delete' },
  ]
  const seen = new Map<string, string>()
  for (const r of routes) {
    const key = `${r.method} ${r.route}`
    const other = seen.get(key)
    if (other) throw new Error(`[nuxt-svc-auth] svcAuth.endpoints: ${r.handler} and ${other} share ${key.toUpperCase()}`)
    seen.set(key, r.handler)
  }
  return routes
}
