import type { H3Event } from 'h3'
import { deleteCookie, getCookie, setCookie } from 'h3'
import type { AuthContext } from '../context'

/** Cookies that bind a provider login to the browser that started it. */
export const LOGIN_COOKIES = {
  state: 'svc-oauth-state',
  verifier: 'svc-oauth-verifier',
  nonce: 'svc-oauth-nonce',
} as const

/** Lifetime of a started login (cookies and the state record), in seconds. */
export const LOGIN_TTL = 600

export interface LoginCookies {
  state?: string
  verifier?: string
  nonce?: string
}

/**
 * HttpOnly, SameSite=Lax (the provider sends the browser back with a top-level GET), limited to
 * the login route's path, `Secure` as the refresh cookie.
 */
function attributes(ctx: AuthContext, path: string) {
  return { httpOnly: true, sameSite: 'lax' as const, secure: ctx.options.tokenRefresh.cookie.secure, path }
}

export function setLoginCookies(event: H3Event, ctx: AuthContext, path: string, values: LoginCookies): void {
  for (const key of ['state', 'verifier', 'nonce'] as const) {
    const value = values[key]
    if (value) setCookie(event, LOGIN_COOKIES[key], value, { ...attributes(ctx, path), maxAge: LOGIN_TTL })
  }
}

const read = (event: H3Event, name: string): string | undefined => {
  const value = getCookie(event, name)
  return value && value.length <= 256 ? value : undefined
}

export function readLoginCookies(event: H3Event): LoginCookies {
  return { state: read(event, LOGIN_COOKIES.state), verifier: read(event, LOGIN_COOKIES.verifier), nonce: read(event, LOGIN_COOKIES.nonce) }
}

/** Deletes the login cookies the request carries: every callback, successful or not, ends the started login. */
export function clearLoginCookies(event: H3Event, ctx: AuthContext, path: string): void {
  for (const name of Object.values(LOGIN_COOKIES)) {
    if (getCookie(event, name) !== undefined) deleteCookie(event, name, attributes(ctx, path))
  }
}
