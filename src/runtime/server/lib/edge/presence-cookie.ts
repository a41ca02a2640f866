import type { H3Event } from 'h3'
import { deleteCookie, getRequestHeader, setCookie } from 'h3'
import type { Parsed, RefreshCookieOptions } from '../../../types/options'
import { hasCookie, presenceCookieName, PRESENCE_VALUE } from '../../../shared/presence'

/** Path of the presence flag: the base URL without trailing slash, so every page reads it (`/` for `__Host-`). */
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

/** A request with the refresh cookie and no presence flag gets the flag (no storage read). */
export function restorePresenceCookie(event: H3Event, cookie: Parsed<RefreshCookieOptions>, baseURL: string): void {
  const header = getRequestHeader(event, 'cookie')
  if (!hasCookie(header, cookie.cookieName) || hasCookie(header, presenceCookieName(cookie.cookieName))) return
  setPresenceCookie(event, cookie, baseURL, cookie.maxAge)
}
