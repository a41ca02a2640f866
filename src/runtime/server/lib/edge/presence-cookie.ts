import type { H3Event } from 'h3'
import { deleteCookie, getRequestHeader, setCookie } from 'h3'
import type { RefreshCookieOptions } from '../../../types/options'
import { hasCookie, presenceCookieName, PRESENCE_VALUE } from '../../../shared/presence'

/**
 * Path of the presence flag: the app's base URL without its trailing slash (`/` at the root), so
 * that every page of the app reads it whatever path the refresh cookie has. A `__Host-` name
 * requires `/`.
 */
export function presenceCookiePath(cookie: Pick<RefreshCookieOptions, 'cookieName'>, baseURL = '/'): string {
  if (cookie.cookieName.startsWith('__Host-')) return '/'
  const trimmed = baseURL.replace(/\/+$/, '')
  return trimmed.startsWith('/') ? trimmed : '/'
}

function attributes(cookie: RefreshCookieOptions, baseURL: string) {
  return { secure: cookie.secure, sameSite: cookie.sameSite, httpOnly: false, path: presenceCookiePath(cookie, baseURL) }
}

/** Sets the presence flag for `maxAge` seconds (the refresh cookie's lifetime), with its Secure and SameSite. */
export function setPresenceCookie(event: H3Event, cookie: RefreshCookieOptions, baseURL: string, maxAge: number): void {
  setCookie(event, presenceCookieName(cookie.cookieName), PRESENCE_VALUE, { ...attributes(cookie, baseURL), maxAge })
}

/** Deletes the presence flag. */
export function clearPresenceCookie(event: H3Event, cookie: RefreshCookieOptions, baseURL: string): void {
  deleteCookie(event, presenceCookieName(cookie.cookieName), attributes(cookie, baseURL))
}

/**
 * For sessions that began before the flag existed: a request that carries the refresh cookie but
 * no flag gets the flag, for the refresh cookie's configured lifetime (its real remaining lifetime
 * is unknown here; a flag that outlives it costs one refused refresh, which deletes the flag).
 * Nothing is read from storage: the flag only says that a refresh is worth trying.
 */
export function restorePresenceCookie(event: H3Event, cookie: RefreshCookieOptions, baseURL: string): void {
  const header = getRequestHeader(event, 'cookie')
  if (!hasCookie(header, cookie.cookieName) || hasCookie(header, presenceCookieName(cookie.cookieName))) return
  setPresenceCookie(event, cookie, baseURL, cookie.maxAge)
}
