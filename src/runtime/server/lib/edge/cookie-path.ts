import type { ModuleOptions } from '../../../types/options'
import { joinBase } from '../../../shared/paths'

/**
 * `name` with the `__Host-` prefix when cookies are `Secure` (`tokenRefresh.cookie.secure`): the
 * browser then accepts the cookie only from this host, without a Domain, for path `/`, so a
 * sibling subdomain cannot plant one (cookie tossing). The module's short-lived and binding
 * cookies are named this way; such a cookie must be set with path `/` and `secure`.
 */
export function hostCookieName(options: Pick<ModuleOptions, 'tokenRefresh'>, name: string): string {
  return options.tokenRefresh.cookie.secure ? `__Host-${name}` : name
}

/**
 * RFC 6265 §5.1.4 path-match: true when a browser sends a cookie of `Path=cookiePath` with a
 * request for `requestPath`. They are equal, or the cookie path is a prefix of the request path
 * that ends with `/` or is followed by `/` there (`/auth` matches `/auth/refresh`, not `/authors`).
 */
export function cookiePathMatches(cookiePath: string, requestPath: string): boolean {
  if (cookiePath === requestPath) return true
  if (!requestPath.startsWith(cookiePath)) return false
  return cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/'
}

/**
 * Where the browser must send the refresh cookie, under `baseURL`: the token, refresh and logout
 * endpoints; the impersonation endpoints when impersonation is on (ending one needs the cookie);
 * and with `enableSSR` every page (the SSR token is minted from the cookie), i.e. the base URL.
 */
export function refreshCookieTargets(options: ModuleOptions, baseURL = '/'): string[] {
  const e = options.endpoints
  const endpoints = [e.tokenPath, e.refreshPath, e.logoutPath]
  if (options.impersonation.enabled) endpoints.push(e.impersonatePath, e.unimpersonatePath)
  // A path that is not absolute is reported by validateOptions already.
  const targets = endpoints.filter(path => typeof path === 'string' && path.startsWith('/')).map(path => joinBase(baseURL, path))
  if (options.enableSSR) targets.push(baseURL.endsWith('/') ? baseURL : `${baseURL}/`)
  return targets
}

/**
 * Errors of `tokenRefresh.cookie.path`: not an absolute path (browsers would use a default path),
 * or one that does not path-match every one of {@link refreshCookieTargets}; the message names
 * the paths it leaves out.
 */
export function refreshCookiePathErrors(options: ModuleOptions, baseURL = '/'): string[] {
  // Without token refresh there is no refresh cookie to send anywhere.
  if (!options.tokenRefresh.enabled) return []
  const path = options.tokenRefresh.cookie.path
  const name = 'svcAuth.tokenRefresh.cookie.path'
  // eslint-disable-next-line no-control-regex
  if (typeof path !== 'string' || !path.startsWith('/') || /[;\u0000-\u001F\u007F]/.test(path)) {
    return [`${name} must be an absolute path such as '/' (got ${JSON.stringify(path)}).`]
  }
  const uncovered = refreshCookieTargets(options, baseURL).filter(target => !cookiePathMatches(path, target))
  if (!uncovered.length) return []
  const pages = options.enableSSR ? ' (with enableSSR the pages need it too, for the SSR token)' : ''
  return [`${name} '${path}' does not cover ${uncovered.map(p => `'${p}'`).join(', ')}: browsers would not send the refresh cookie there${pages}. Use '/' or a path that every one of them starts with.`]
}
