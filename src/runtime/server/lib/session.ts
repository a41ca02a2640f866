import type { H3Event } from 'h3'
import { deleteCookie, getCookie, setCookie } from 'h3'
import type { AuthClaims, AuthUser, CustomClaims } from '../../types/auth'
import { buildAccessClaims, sanitizeCustomClaims } from './claims'
import type { AuthContext } from './context'
import { getAuthHandlers } from './handlers'
import { clearPresenceCookie, setPresenceCookie } from './presence-cookie'
import { readSessionRecord, type RefreshTokenRecord } from './records/refresh-token'

/**
 * Sets the HttpOnly refresh cookie with the configured attributes (`maxAge` overrides the
 * lifetime), and the session presence flag beside it with the same lifetime.
 */
export function setRefreshCookie(event: H3Event, ctx: AuthContext, token: string, maxAge?: number): void {
  const c = ctx.options.tokenRefresh.cookie
  setCookie(event, c.cookieName, token, { maxAge: maxAge ?? c.maxAge, secure: c.secure, httpOnly: c.httpOnly, sameSite: c.sameSite, path: c.path })
  setPresenceCookie(event, c, ctx.baseURL, maxAge ?? c.maxAge)
}

/** Deletes the refresh cookie and the session presence flag. */
export function clearRefreshCookie(event: H3Event, ctx: AuthContext): void {
  const c = ctx.options.tokenRefresh.cookie
  deleteCookie(event, c.cookieName, { secure: c.secure, httpOnly: c.httpOnly, sameSite: c.sameSite, path: c.path })
  clearPresenceCookie(event, c, ctx.baseURL)
}

/** Deletes the session presence flag only (a request that came without a refresh cookie). */
export function clearSessionPresence(event: H3Event, ctx: AuthContext): void {
  clearPresenceCookie(event, ctx.options.tokenRefresh.cookie, ctx.baseURL)
}

export function readRefreshCookie(event: H3Event, ctx: AuthContext): string | undefined {
  const value = getCookie(event, ctx.options.tokenRefresh.cookie.cookieName)
  return value && value.length <= 512 ? value : undefined
}

/** The session (family) of the request's refresh cookie when it carries a live one. */
export async function cookieSessionId(event: H3Event, ctx: AuthContext): Promise<string | undefined> {
  const cookie = readRefreshCookie(event, ctx)
  return cookie ? (await readSessionRecord(ctx, cookie))?.family : undefined
}

/**
 * Custom claims of a user: `base` (resolved at login) with the global `customClaims` handler's
 * answer over it, limited to JSON values.
 */
export async function resolveGlobalClaims(ctx: AuthContext, user: AuthUser, base: CustomClaims = {}): Promise<CustomClaims> {
  const handler = getAuthHandlers().customClaims
  const extra = handler ? await handler(user) : undefined
  const onDrop = (key: string, reason: string) => ctx.logger.warn(`Custom claim "${key}" dropped: ${reason}`)
  return { ...sanitizeCustomClaims(base, onDrop), ...sanitizeCustomClaims(extra ?? {}, onDrop) }
}

/** Signs an access token for a stored session (refresh token record). */
export async function mintSessionToken(ctx: AuthContext, record: Pick<RefreshTokenRecord, 'user' | 'userId' | 'provider' | 'family' | 'impersonation'>, claims: CustomClaims, expiresIn: number = ctx.lifetimes.access): Promise<{ token: string, expiresIn: number, payload: AuthClaims }> {
  const payload = buildAccessClaims({ ...record.user, sub: record.userId }, record.provider, claims, { sid: record.family, impersonation: record.impersonation })
  return ctx.tokens.sign(payload, { expiresIn })
}
