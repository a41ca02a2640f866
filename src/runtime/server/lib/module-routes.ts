import type { EndpointOptions, ModuleOptions } from '../../types/options'
import { normalizePath } from '../../shared/paths'
import { MOCK_ENDPOINTS, oauthProviderNames } from './oauth/providers'
import { isPasswordEnabled } from './password/options'
import { PASSWORD_ROUTES, passwordRoutePath } from './password/paths'

/** A server endpoint of the module. */
export interface ServerRoute {
  /** Path as Nitro registers it (`:name` matches one segment). */
  route: string
  method: 'get' | 'post' | 'delete'
  /** File under runtime/server/routes. */
  handler: string
}

/** The module's own endpoints (tokens, user, keys, impersonation, sessions) at their configured paths. */
export function coreRoutes(e: EndpointOptions): ServerRoute[] {
  const sessions = e.sessionsPath.replace(/\/$/, '')
  return [
    { route: e.tokenPath, method: 'post', handler: 'token.post' },
    { route: e.refreshPath, method: 'post', handler: 'refresh.post' },
    { route: e.logoutPath, method: 'post', handler: 'logout.post' },
    { route: e.userInfoPath, method: 'get', handler: 'me.get' },
    { route: e.jwksPath, method: 'get', handler: 'jwks.get' },
    { route: e.impersonatePath, method: 'post', handler: 'impersonate.post' },
    { route: e.unimpersonatePath, method: 'post', handler: 'unimpersonate.post' },
    { route: e.sessionsPath, method: 'get', handler: 'sessions/list.get' },
    { route: `${sessions}/revoke-others`, method: 'post', handler: 'sessions/revoke-others.post' },
    { route: `${sessions}/:id`, method: 'delete', handler: 'sessions/revoke.delete' },
  ]
}

/**
 * Every path the module answers on for these options: its own endpoints, the callback page, the
 * password routes (when the provider is on), `<loginPath>/<name>` of every OAuth provider (also
 * when the app serves one with its own route file) and the mock provider's endpoints.
 */
export function moduleRoutePaths(options: Pick<ModuleOptions, 'endpoints' | 'providers'>): string[] {
  const { endpoints, providers } = options
  const paths = coreRoutes(endpoints).map(route => route.route)
  paths.push(endpoints.callbackPath)
  if (isPasswordEnabled(providers?.password)) {
    for (const route of PASSWORD_ROUTES) paths.push(passwordRoutePath(endpoints.authPath, route.path))
  }
  const loginBase = endpoints.loginPath.replace(/\/+$/, '')
  for (const name of oauthProviderNames(providers)) paths.push(`${loginBase}/${name}`)
  if (providers?.mock) paths.push(...Object.values(MOCK_ENDPOINTS))
  return paths
}

/** True for a path (query ignored) that one of `paths` matches as whole segments. */
export type PathMatcher = (path: string) => boolean

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * A matcher of route paths: static ones through a set, those with `:name` segments through one
 * regular expression (`:name` matches exactly one segment). A trailing slash and the query are
 * ignored, as Nitro's router ignores them.
 */
export function createPathMatcher(paths: readonly string[]): PathMatcher {
  const exact = new Set<string>()
  const patterns: string[] = []
  for (const path of paths) {
    const normal = normalizePath(path)
    if (!normal.includes('/:')) {
      exact.add(normal)
      continue
    }
    patterns.push(normal.split('/').map(segment => (segment.startsWith(':') ? '[^/]+' : escapeRegExp(segment))).join('/'))
  }
  const dynamic = patterns.length ? new RegExp(`^(?:${patterns.join('|')})$`) : undefined
  return (path) => {
    const normal = normalizePath(path)
    return exact.has(normal) || (dynamic !== undefined && dynamic.test(normal))
  }
}

const matchers = new WeakMap<object, PathMatcher>()

/**
 * True when `path` (as the server sees it: under the app's base URL, query ignored) is one the
 * module answers on ({@link moduleRoutePaths}). The matcher is built once per options object;
 * afterwards a call is a set lookup.
 */
export function isModuleRoute(options: Pick<ModuleOptions, 'endpoints' | 'providers'>, path: string): boolean {
  let matcher = matchers.get(options)
  if (!matcher) {
    matcher = createPathMatcher(moduleRoutePaths(options))
    matchers.set(options, matcher)
  }
  return matcher(path)
}
