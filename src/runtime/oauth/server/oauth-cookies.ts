import type { H3Event } from 'h3'
import { deleteCookie, getCookie, setCookie } from 'h3'
import type { AuthContext } from '../../server/lib/core/context'
import { hostCookieAttributes, hostCookieName } from '../../server/lib/edge/cookie-path'

/** Cookies that keep a started provider login in the browser that started it. */
export const LOGIN_COOKIES = {
  state: 'svc-oauth-state',
  verifier: 'svc-oauth-verifier',
  nonce: 'svc-oauth-nonce',
} as const

type LoginCookie = keyof typeof LOGIN_COOKIES

/** Lifetime of a started login (cookies, the state record and the browser binding), in seconds. */
export const LOGIN_TTL = 600

export type LoginCookies = Partial<Record<LoginCookie, string>>

/** Name of a login cookie, `__Host-` prefixed when cookies are `Secure` (a sibling subdomain cannot plant a state). */
export function loginCookieName(ctx: AuthContext, key: LoginCookie): string {
  return hostCookieName(ctx.options, LOGIN_COOKIES[key])
}

const KEYS: readonly LoginCookie[] = ['state', 'verifier', 'nonce']

export function setLoginCookies(event: H3Event, ctx: AuthContext, values: LoginCookies): void {
  for (const key of KEYS) {
    const value = values[key]
    if (value) setCookie(event, loginCookieName(ctx, key), value, { ...hostCookieAttributes(ctx.options), maxAge: LOGIN_TTL })
  }
}

const read = (event: H3Event, name: string): string | undefined => {
  const value = getCookie(event, name)
  return value && value.length <= 256 ? value : undefined
}

export function readLoginCookies(event: H3Event, ctx: AuthContext): LoginCookies {
  return { state: read(event, loginCookieName(ctx, 'state')), verifier: read(event, loginCookieName(ctx, 'verifier')), nonce: read(event, loginCookieName(ctx, 'nonce')) }
}

/** Deletes the login cookies the request carries (a callback of the login they belong to, successful or not, ends it). */
export function clearLoginCookies(event: H3Event, ctx: AuthContext): void {
  for (const key of KEYS) {
    const name = loginCookieName(ctx, key)
    if (getCookie(event, name) !== undefined) deleteCookie(event, name, hostCookieAttributes(ctx.options))
  }
}
