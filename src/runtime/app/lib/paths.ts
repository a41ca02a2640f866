import type { EndpointOptions } from '../../types/options'
import { isRelativePath } from '../../server/lib/validate'

export { isRelativePath }

/** Query parameters appended by `withQuery` (undefined values are left out). */
export type QueryParams = Record<string, string | undefined>

/** Path without query and hash, without a trailing slash (except the root). */
export function normalizePath(path: string): string {
  const bare = path.split(/[?#]/, 1)[0] || '/'
  return bare.length > 1 && bare.endsWith('/') ? bare.replace(/\/+$/, '') || '/' : bare
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

function segmentsOf(path: string): string[] {
  return normalizePath(path).split('/').filter(Boolean)
}

function segmentMatcher(segment: string): RegExp {
  const source = segment.split('').map(c => (c === '*' ? '[^/]*' : escapeRegExp(c))).join('')
  return new RegExp(`^${source}$`)
}

function matchSegments(pattern: string[], path: string[]): boolean {
  if (!pattern.length) return !path.length
  const [head, ...rest] = pattern
  if (head === '**') {
    for (let skip = 0; skip <= path.length; skip++) {
      if (matchSegments(rest, path.slice(skip))) return true
    }
    return false
  }
  return path.length > 0 && segmentMatcher(head!).test(path[0]!) && matchSegments(rest, path.slice(1))
}

/**
 * True when `path` (query and hash ignored) matches the route glob `pattern`: `*` matches within
 * one segment, a `**` segment any number of segments, also none
 * (`/docs/**` matches `/docs`, `/docs/a` and `/docs/a/b`). Trailing slashes are ignored.
 */
export function matchesRouteGlob(pattern: string, path: string): boolean {
  return matchSegments(segmentsOf(pattern), segmentsOf(path))
}

/** True when `path` matches one of the `publicRoutes` globs. */
export function isPublicRoute(path: string, patterns: readonly string[] | undefined): boolean {
  return !!patterns?.some(pattern => typeof pattern === 'string' && matchesRouteGlob(pattern, path))
}

/**
 * True when a request goes to this application: a relative path (`/api/...`) without a scheme or
 * host, and a `baseURL`, if given, that is relative too. Only such requests get the access token.
 */
export function isSameOriginRequest(request: unknown, baseURL?: string): request is string {
  if (typeof request !== 'string' || !isRelativePath(request)) return false
  return baseURL === undefined || baseURL === '' || isRelativePath(baseURL)
}

/** Joins a relative base URL (Nuxt `app.baseURL` or a fetch `baseURL`) and a path. */
export function joinBase(baseURL: string | undefined, path: string): string {
  if (!baseURL || baseURL === '/') return path
  return `${baseURL.replace(/\/+$/, '')}${path}`
}

/** `path` with the app base URL taken off, for matching against route paths. */
export function stripBase(path: string, baseURL: string | undefined): string {
  const base = (baseURL ?? '/').replace(/\/+$/, '')
  if (!base) return path
  if (path === base) return '/'
  return path.startsWith(`${base}/`) ? path.slice(base.length) : path
}

/** True when `path` starts at `prefix` as whole segments (`/auth` matches `/auth/x`, not `/authors`). */
function isUnder(path: string, prefix: string): boolean {
  const base = normalizePath(prefix)
  return path === base || path.startsWith(base === '/' ? '/' : `${base}/`)
}

/**
 * True for the module's own authentication endpoints (everything under `authPath` and
 * `loginPath`, and the token, refresh, logout, callback and impersonation paths). The fetch helper
 * never refreshes or retries for them (rule 5). The user info path and the session endpoints
 * (bearer-authenticated APIs) are ordinary APIs.
 */
export function isAuthEndpoint(request: string, endpoints: Partial<EndpointOptions>, baseURL?: string): boolean {
  const path = normalizePath(baseURL ? joinBase(baseURL, request) : request)
  if (typeof endpoints.sessionsPath === 'string' && isUnder(path, endpoints.sessionsPath)) return false
  const exact = [endpoints.tokenPath, endpoints.refreshPath, endpoints.logoutPath, endpoints.callbackPath, endpoints.impersonatePath, endpoints.unimpersonatePath]
  if (exact.some(p => typeof p === 'string' && normalizePath(p) === path)) return true
  return [endpoints.authPath, endpoints.loginPath].some(p => typeof p === 'string' && p !== '/' && isUnder(path, p))
}

/** `path` with the given query parameters appended (an existing query and hash are kept). */
export function withQuery(path: string, params: QueryParams): string {
  const hashIndex = path.indexOf('#')
  const hash = hashIndex >= 0 ? path.slice(hashIndex) : ''
  const base = hashIndex >= 0 ? path.slice(0, hashIndex) : path
  const pairs = Object.entries(params)
    .filter((entry): entry is [string, string] => typeof entry[1] === 'string')
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`)
  if (!pairs.length) return path
  return `${base}${base.includes('?') ? '&' : '?'}${pairs.join('&')}${hash}`
}

/**
 * A redirect target that is safe to navigate to: `target` when it is a same-origin relative path
 * (and not one of `avoid`, such as the callback page), else `fallback`.
 */
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
