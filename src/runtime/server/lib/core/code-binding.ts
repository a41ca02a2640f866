import type { H3Event } from 'h3'
import { getCookie, setCookie } from 'h3'
import type { AuthContext } from './context'
import { hostCookieAttributes, hostCookieName } from '../edge/cookie-path'
import { randomToken, safeEqual } from '../store/crypto'
import { RESET_SESSION_TTL } from './records/reset-session'

/** HMAC purpose of the binding value kept in an authorization code record. */
export const CODE_BINDING_PURPOSE = 'code-binding'

/** 32 random bytes in base64url. */
const BINDING_VALUE = /^[\w-]{43}$/

/** Name of the code cookie, `__Host-` prefixed when cookies are `Secure` (a sibling subdomain cannot plant a binding). */
export function codeCookieName(ctx: AuthContext): string {
  return hostCookieName(ctx.options, ctx.options.authCode.cookieName)
}

/** The binding value this browser presents, if well-formed. */
export function readCodeBinding(event: H3Event, ctx: AuthContext): string | undefined {
  const value = getCookie(event, codeCookieName(ctx))
  return value && BINDING_VALUE.test(value) ? value : undefined
}

/** Binds a code to the browser of `event`: returns the binding cookie's value (shared by tabs, or new) and (re)sets it. */
export function bindCodeToBrowser(event: H3Event, ctx: AuthContext, lifetime = 0): string {
  const value = readCodeBinding(event, ctx) ?? randomToken(32)
  setCookie(event, codeCookieName(ctx), value, {
    ...hostCookieAttributes(ctx.options),
    maxAge: Math.ceil(Math.max(lifetime, ctx.lifetimes.authCode, RESET_SESSION_TTL, ctx.options.twoFactor?.enabled ? ctx.options.twoFactor.pendingLoginTTL : 0)),
  })
  return value
}

/** HMAC of the binding of the browser of `event` (binding it first: see {@link bindCodeToBrowser}). */
export function browserBindingOf(event: H3Event, ctx: AuthContext, lifetime?: number): string {
  return ctx.store.hash(CODE_BINDING_PURPOSE, bindCodeToBrowser(event, ctx, lifetime))
}

/** True when the browser presents the binding whose HMAC the record holds (current or previous secret). */
export function matchesCodeBinding(event: H3Event, ctx: AuthContext, expected: string): boolean {
  const presented = readCodeBinding(event, ctx)
  return presented !== undefined && ctx.store.hashes(CODE_BINDING_PURPOSE, presented).some(hash => safeEqual(hash, expected))
}
