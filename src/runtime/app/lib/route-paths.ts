import type { EndpointOptions } from '../../types/options'
import { isPathUnder, isRelativePath, joinBase, matchesRouteGlob, normalizePath, withQuery, type QueryParams } from '../../shared/paths'

/** True when `path` matches one of the `publicRoutes` globs. */
export function isPublicRoute(path: string, patterns: readonly string[] | undefined): boolean {
  return !!patterns?.some(pattern => typeof pattern === 'string' && matchesRouteGlob(pattern, path))
}

/** True for a relative path (and relative `baseURL`): only such requests get the access token. */
export function isSameOriginRequest(request: unknown, baseURL?: string): request is string {
  if (!isRelativePath(request)) return false
  return baseURL === undefined || baseURL === '' || isRelativePath(baseURL)
}

/** True for the module's own auth endpoints (never refreshed or retried); user info and sessions are not. */
export function isAuthEndpoint(request: string, endpoints: EndpointOptions, baseURL?: string): boolean {
  const path = normalizePath(baseURL ? joinBase(baseURL, request) : request)
  if (isPathUnder(path, endpoints.sessionsPath)) return false
  const exact = [endpoints.tokenPath, endpoints.refreshPath, endpoints.logoutPath, endpoints.callbackPath, endpoints.impersonatePath, endpoints.unimpersonatePath]
  if (exact.some(p => normalizePath(p) === path)) return true
  return [endpoints.authPath, endpoints.loginPath].some(p => p !== '/' && isPathUnder(path, p))
}

/** `target` when a same-origin relative path not in `avoid`, else `fallback`. */
export function safeRedirect(target: unknown, fallback: string, avoid: readonly string[] = []): string {
  if (!isRelativePath(target)) return fallback
  const path = normalizePath(target)
  if (avoid.some(p => normalizePath(p) === path)) return fallback
  return target
}

/** The message shown after a failed automatic refresh (rule 6). */
export const SESSION_EXPIRED_MESSAGE = 'Your session has expired. Please log in again.'

/** `<error>?error=token_refresh_failed&error_description=<message>` (rule 6). */
export function refreshErrorUrl(errorPath: string, message: string = SESSION_EXPIRED_MESSAGE): string {
  return withQuery(safeRedirect(errorPath, '/'), { error: 'token_refresh_failed', error_description: message })
}

/** Options of `useAuth().login()`. */
export interface LoginUrlOptions {
  /** Same-origin path to land on after the login (ignored unless relative). */
  redirect?: string
  /** Extra query parameters for the provider route (for example `{ user: '1' }` for the mock). */
  query?: QueryParams
}

/** `<loginPath>/<provider>?redirect=...`: the server route that starts a provider login. */
export function loginUrl(loginPath: string, provider: string, options: LoginUrlOptions = {}): string {
  const path = `${loginPath.replace(/\/+$/, '')}/${encodeURIComponent(provider)}`
  const redirect = isRelativePath(options.redirect) ? options.redirect : undefined
  return withQuery(path, { ...options.query, redirect })
}
