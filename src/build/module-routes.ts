import type { EndpointOptions, ModuleOptions } from '../runtime/types/options'
import { MOCK_ENDPOINTS } from '../runtime/oauth/server/mock-preset'
import { oauthProviderNames } from '../runtime/oauth/server/provider-registry'
import { isPasswordEnabled } from '../runtime/password/server/password-options'
import { PASSWORD_ROUTES, passwordRoutePath } from '../runtime/password/password-paths'
import { isTwoFactorEnabled } from '../runtime/two-factor/server/two-factor-options'
import { TWO_FACTOR_ROUTES, twoFactorRoutePath } from '../runtime/two-factor/two-factor-paths'
import { isPasskeyEnabled } from '../runtime/passkey/server/passkey-options'
import { PASSKEY_ROUTES, passkeyRoutePath } from '../runtime/passkey/passkey-paths'

/** A server endpoint of the module. */
export interface ServerRoute {
  /** Path as Nitro registers it (`:name` matches one segment). */
  route: string
  method: 'get' | 'post' | 'delete'
  /** The handler's file under `src/runtime`, without its extension. */
  handler: string
}

/** The module's own endpoints (tokens, user, keys, impersonation, sessions) at their configured paths. */
export function coreRoutes(e: EndpointOptions): ServerRoute[] {
  const sessions = e.sessionsPath.replace(/\/$/, '')
  return [
    { route: e.tokenPath, method: 'post', handler: 'server/routes/token.post' },
    { route: e.refreshPath, method: 'post', handler: 'server/routes/refresh.post' },
    { route: e.logoutPath, method: 'post', handler: 'server/routes/logout.post' },
    { route: e.userInfoPath, method: 'get', handler: 'server/routes/me.get' },
    { route: e.jwksPath, method: 'get', handler: 'server/routes/jwks.get' },
    { route: e.impersonatePath, method: 'post', handler: 'impersonation/server/routes/impersonate.post' },
    { route: e.unimpersonatePath, method: 'post', handler: 'impersonation/server/routes/unimpersonate.post' },
    { route: e.sessionsPath, method: 'get', handler: 'server/routes/sessions/list.get' },
    { route: `${sessions}/revoke-others`, method: 'post', handler: 'server/routes/sessions/revoke-others.post' },
    { route: `${sessions}/:id`, method: 'delete', handler: 'server/routes/sessions/revoke.delete' },
  ]
}

/** Handler of the automatic `GET <loginPath>/<name>` route of an OAuth provider. */
export const OAUTH_LOGIN_HANDLER = 'oauth/server/routes/login.get'

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
      { route: MOCK_ENDPOINTS.authorize, method: 'get', handler: 'oauth/server/routes/mock-authorize.get' },
      { route: MOCK_ENDPOINTS.token, method: 'post', handler: 'oauth/server/routes/mock-token.post' },
      { route: MOCK_ENDPOINTS.userinfo, method: 'get', handler: 'oauth/server/routes/mock-userinfo.get' },
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
    handler: `password/server/routes/${route.handler}`,
  })))
}

/** Options that decide the module's routes (`twoFactor` may be absent: off). */
export type RouteOptions = Pick<ModuleOptions, 'endpoints' | 'providers'> & Partial<Pick<ModuleOptions, 'twoFactor'>>

/** The second factor's routes under `<authPath>/two-factor/`, when `twoFactor.enabled`. */
export function twoFactorRoutes(options: RouteOptions): ServerRoute[] {
  if (!isTwoFactorEnabled(options)) return []
  return TWO_FACTOR_ROUTES.map(route => ({ route: twoFactorRoutePath(options.endpoints.authPath, route.path), method: route.method, handler: `two-factor/server/routes/${route.handler}` }))
}

/** The passkey provider's routes under `<authPath>/passkey/`, when the provider is on. */
export function passkeyRoutes(options: Pick<ModuleOptions, 'endpoints' | 'providers'>): ServerRoute[] {
  if (!isPasskeyEnabled(options.providers?.passkey)) return []
  return PASSKEY_ROUTES.map(route => ({
    route: passkeyRoutePath(options.endpoints.authPath, route.path),
    method: route.method,
    handler: `passkey/server/routes/${route.handler}`,
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
