import type { H3Event } from 'h3'
import { deleteCookie, getCookie, setCookie } from 'h3'
import type { AuthClaims, AuthUser, CustomClaims } from '../../types/auth'
import { buildAccessClaims, sanitizeCustomClaims } from './claims'
import type { AuthContext } from './context'
import { getAuthHandlers } from './handlers'
import type { RefreshTokenRecord } from './records/refresh-token'

/** Sets the HttpOnly refresh cookie with the configured attributes (`maxAge` overrides the lifetime). */
export function setRefreshCookie(event: H3Event, ctx: AuthContext, token: string, maxAge?: number): void {
  const c = ctx.options.tokenRefresh.cookie
  setCookie(event, c.cookieName, token, { maxAge: maxAge ?? c.maxAge, secure: c.secure, httpOnly: c.httpOnly, sameSite: c.sameSite, path: c.path })
}

export function clearRefreshCookie(event: H3Event, ctx: AuthContext): void {
  const c = ctx.options.tokenRefresh.cookie
  deleteCookie(event, c.cookieName, { secure: c.secure, httpOnly: c.httpOnly, sameSite: c.sameSite, path: c.path })
}

export function readRefreshCookie(event: H3Event, ctx: AuthContext): string | undefined {
  const value = getCookie(event, ctx.options.tokenRefresh.cookie.cookieName)
  return value && value.length <= 512 ? value : undefined
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
