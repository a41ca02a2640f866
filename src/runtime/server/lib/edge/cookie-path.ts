import type { ModuleOptions } from '../../../types/options'
import { joinBase } from '../../../shared/paths'

/** `name` with the `__Host-` prefix when cookies are `Secure`, so a sibling subdomain cannot plant one. */
export function hostCookieName(options: Pick<ModuleOptions, 'tokenRefresh'>, name: string): string {
  return options.tokenRefresh.cookie.secure ? `__Host-${name}` : name
}

/** Attributes of a {@link hostCookieName} cookie: HttpOnly, SameSite=Lax (top-level GETs back from a provider), path `/`. */
export function hostCookieAttributes(options: Pick<ModuleOptions, 'tokenRefresh'>) {
  return { httpOnly: true, secure: options.tokenRefresh.cookie.secure, sameSite: 'lax' as const, path: '/' }
}

/** RFC 6265 §5.1.4 path-match: `/auth` matches `/auth` and `/auth/refresh`, not `/authors`. */
export function cookiePathMatches(cookiePath: string, requestPath: string): boolean {
  if (cookiePath === requestPath) return true
  if (!requestPath.startsWith(cookiePath)) return false
  return cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/'
}

/** Where the browser must send the refresh cookie under `baseURL` (every page with `enableSSR`). */
export function refreshCookieTargets(options: ModuleOptions, baseURL = '/'): string[] {
  const e = options.endpoints
  const endpoints = [e.tokenPath, e.refreshPath, e.logoutPath]
  if (options.impersonation.enabled) endpoints.push(e.impersonatePath, e.unimpersonatePath)
  // A path that is not absolute is reported by validateOptions already.
  const targets = endpoints.filter(path => typeof path === 'string' && path.startsWith('/')).map(path => joinBase(baseURL, path))
  if (options.enableSSR) targets.push(baseURL.endsWith('/') ? baseURL : `${baseURL}/`)
  return targets
}

/** Errors of `tokenRefresh.cookie.path`: not absolute, or not path-matching every {@link refreshCookieTargets}. */
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
