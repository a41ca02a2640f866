import type { EndpointOptions, ModuleOptions } from '../../types/options'
import { escapeRegExp, normalizePath } from '../../shared/paths'
import { MOCK_ENDPOINTS } from './oauth/mock-preset'
import { oauthProviderNames } from './oauth/providers'
import { isPasswordEnabled } from './password/options'
import { PASSWORD_ROUTES, passwordRoutePath } from './password/paths'
import { isTwoFactorEnabled } from './two-factor/options'
import { TWO_FACTOR_ROUTES, twoFactorRoutePath } from './two-factor/paths'
import { isPasskeyEnabled } from './passkey/options'
import { PASSKEY_ROUTES, passkeyRoutePath } from './passkey/paths'

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

/** Handler of the automatic `GET <loginPath>/<name>` route of an OAuth provider. */
export const OAUTH_LOGIN_HANDLER = 'oauth/login.get'

/**
 * The OAuth part: `GET <loginPath>/<name>` for every configured provider (the mock one included)
 * and the mock provider's endpoints when it is configured (they answer 404 in production unless
 * `enableInProduction`).
 */
export function oauthRoutes(options: Pick<ModuleOptions, 'endpoints' | 'providers'>): ServerRoute[] {
  const base = options.endpoints.loginPath.replace(/\/+$/, '')
  const routes: ServerRoute[] = oauthProviderNames(options.providers).map(name => ({ route: `${base}/${name}`, method: 'get', handler: OAUTH_LOGIN_HANDLER }))
  if (options.providers?.mock) {
    routes.push(
      { route: MOCK_ENDPOINTS.authorize, method: 'get', handler: 'oauth/mock-authorize.get' },
      { route: MOCK_ENDPOINTS.token, method: 'post', handler: 'oauth/mock-token.post' },
      { route: MOCK_ENDPOINTS.userinfo, method: 'get', handler: 'oauth/mock-userinfo.get' },
    )
  }
  return routes
}

/** The password provider's routes under `<authPath>/password/`, when the provider is on. */
export function passwordRoutes(options: Pick<ModuleOptions, 'endpoints' | 'providers'>): ServerRoute[] {
  if (!isPasswordEnabled(options.providers?.password)) return []
  return PASSWORD_ROUTES.flatMap(route => route.methods.map(method => ({
    route: passwordRoutePath(options.endpoints.authPath, route.path),
    method,
    handler: `password/${route.handler}`,
  })))
}

/** Options that decide the module's routes (`twoFactor` may be absent: off). */
export type RouteOptions = Pick<ModuleOptions, 'endpoints' | 'providers'> & Partial<Pick<ModuleOptions, 'twoFactor'>>

/** The second factor's routes under `<authPath>/two-factor/`, when `twoFactor.enabled`. */
export function twoFactorRoutes(options: RouteOptions): ServerRoute[] {
  if (!isTwoFactorEnabled(options)) return []
  return TWO_FACTOR_ROUTES.map(route => ({ route: twoFactorRoutePath(options.endpoints.authPath, route.path), method: route.method, handler: `two-factor/${route.handler}` }))
}

/** The passkey provider's routes under `<authPath>/passkey/`, when the provider is on. */
export function passkeyRoutes(options: Pick<ModuleOptions, 'endpoints' | 'providers'>): ServerRoute[] {
  if (!isPasskeyEnabled(options.providers?.passkey)) return []
  return PASSKEY_ROUTES.map(route => ({
    route: passkeyRoutePath(options.endpoints.authPath, route.path),
    method: route.method,
    handler: `passkey/${route.handler}`,
  }))
}

/**
 * Every path the module answers on for these options: the routes it registers ({@link coreRoutes},
 * {@link oauthRoutes}, {@link passwordRoutes}, {@link passkeyRoutes}, {@link twoFactorRoutes}; a
 * login route counts also when the app serves it with its own route file), the callback page
 * and, with the second factor on, its page.
 */
export function moduleRoutePaths(options: RouteOptions): string[] {
  const routes = [...coreRoutes(options.endpoints), ...oauthRoutes(options), ...passwordRoutes(options), ...passkeyRoutes(options), ...twoFactorRoutes(options)]
  const pages = [options.endpoints.callbackPath, ...(isTwoFactorEnabled(options) ? [options.endpoints.secondFactorPath] : [])]
  return [...routes.map(route => route.route), ...pages]
}

export type PathMatcher = (path: string) => boolean

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
export function isModuleRoute(options: RouteOptions, path: string): boolean {
  let matcher = matchers.get(options)
  if (!matcher) {
    matcher = createPathMatcher(moduleRoutePaths(options))
    matchers.set(options, matcher)
  }
  return matcher(path)
}
