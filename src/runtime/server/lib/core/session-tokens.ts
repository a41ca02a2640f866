import { isIP } from 'node:net'
import type { H3Event } from 'h3'
import { deleteCookie, getRequestHeader, getRequestURL, setCookie } from 'h3'
import { cookieValues } from '../../../shared/presence'
import type { AuthClaims, AuthUser, CustomClaims } from '../../../types/auth'
import { buildAccessClaims, sanitizeCustomClaims } from './claims'
import type { AuthContext } from './context'
import { getAuthHandlers } from './handlers'
import { clearPresenceCookie, setPresenceCookie } from '../edge/presence-cookie'
import { readSessionRecord, refreshLifetime, type RefreshTokenRecord } from './records/refresh-token'
import { pastStaleMark } from './stale-claims'

/** Sets the HttpOnly refresh cookie (`maxAge` overrides the lifetime) and the presence flag beside it. */
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

/** Longest refresh cookie value read (a token is 43 characters). */
const MAX_COOKIE_VALUE = 512

/** Every refresh cookie the request carries; more than one means cookie tossing: serve from none. */
export function refreshCookieValues(event: H3Event, ctx: AuthContext): string[] {
  return cookieValues(getRequestHeader(event, 'cookie'), ctx.options.tokenRefresh.cookie.cookieName)
}

/** The request's refresh cookie: undefined when there is none, or more than one (see {@link refreshCookieValues}). */
export function readRefreshCookie(event: H3Event, ctx: AuthContext): string | undefined {
  const values = refreshCookieValues(event, ctx)
  const value = values.length === 1 ? values[0] : undefined
  return value && value.length <= MAX_COOKIE_VALUE ? value : undefined
}

/** Deletes the refresh cookie wherever a browser may hold one for this request (a planted one's place is unknown). */
export function clearTossedRefreshCookies(event: H3Event, ctx: AuthContext): void {
  clearRefreshCookie(event, ctx)
  const c = ctx.options.tokenRefresh.cookie
  if (c.cookieName.startsWith('__Host-')) return
  const { hostname, pathname } = getRequestURL(event)
  const segments = pathname.split('/').filter(Boolean).slice(0, 8)
  const above = segments.map((_, i) => `/${segments.slice(0, i + 1).join('/')}`)
  const paths = new Set(['/', c.path, ...above.flatMap((path, i) => (i < above.length - 1 ? [path, `${path}/`] : [path]))])
  const labels = isIP(hostname.replace(/^\[|\]$/g, '')) ? [] : hostname.split('.').slice(-6)
  const domains: Array<string | undefined> = [undefined, ...labels.slice(0, -1).map((_, i) => labels.slice(i).join('.'))]
  for (const domain of domains) {
    for (const path of paths) deleteCookie(event, c.cookieName, { secure: c.secure, httpOnly: c.httpOnly, sameSite: c.sameSite, path, ...(domain ? { domain } : {}) })
  }
}

/** The stored session of the request's refresh cookie when it is the session of `claims` (the bearer's `sid` and `sub`), else null. */
export async function bearerSession(event: H3Event, ctx: AuthContext, claims: Pick<AuthClaims, 'sub' | 'sid'>): Promise<RefreshTokenRecord | null> {
  const cookie = readRefreshCookie(event, ctx)
  const session = cookie ? await readSessionRecord(ctx, cookie) : null
  return session && session.family === claims.sid && session.userId === claims.sub ? session : null
}

/** The session (family) of the request's refresh cookie when it carries a live one. */
export async function cookieSessionId(event: H3Event, ctx: AuthContext): Promise<string | undefined> {
  const cookie = readRefreshCookie(event, ctx)
  return cookie ? (await readSessionRecord(ctx, cookie))?.family : undefined
}

/** Custom claims of a user: `base` with the global `customClaims` handler's answer over it (JSON values only). */
export async function resolveGlobalClaims(ctx: AuthContext, user: AuthUser, base: CustomClaims = {}): Promise<CustomClaims> {
  const handler = getAuthHandlers().customClaims
  const extra = handler ? await handler(user) : undefined
  const onDrop = (key: string, reason: string) => ctx.logger.warn(`Custom claim "${key}" dropped: ${reason}`)
  return { ...sanitizeCustomClaims(base, onDrop), ...sanitizeCustomClaims(extra ?? {}, onDrop) }
}

/** Seconds an access token of a stored session lives: `expiresIn`, never past the record's `notAfter`. */
export function accessLifetime(ctx: AuthContext, record: Pick<RefreshTokenRecord, 'notAfter'>, expiresIn: number = ctx.lifetimes.access): number {
  return Math.max(1, Math.floor(Math.min(expiresIn, refreshLifetime(ctx, record))))
}

/** `claims` without those a feature owns ({@link AuthFeature.ownClaims}): only the feature sets them. */
export function withoutFeatureClaims(ctx: AuthContext, claims: CustomClaims): CustomClaims {
  const owned = ctx.features.flatMap(feature => feature.ownClaims?.(ctx.options) ?? [])
  if (!owned.some(name => Object.hasOwn(claims, name))) return claims
  return Object.fromEntries(Object.entries(claims).filter(([name]) => !owned.includes(name)))
}

/** The features' claims of a session ({@link AuthFeature.sessionClaims}), later features over earlier ones. */
async function featureSessionClaims(ctx: AuthContext, session: { userId: string, sid: string }): Promise<CustomClaims> {
  let claims: CustomClaims = {}
  for (const feature of ctx.features) {
    if (feature.sessionClaims) claims = { ...claims, ...await feature.sessionClaims(ctx, session) }
  }
  return claims
}

/**
 * Signs an access token for a stored session (refresh token record), within {@link accessLifetime}: the custom
 * claims without the features' own, then the features' session claims (none for an impersonated session). Right
 * after a stale mark of the user it first waits for the mark's time ({@link pastStaleMark}), so that its claims
 * are read after the change and the token is accepted.
 */
export async function mintSessionToken(ctx: AuthContext, record: Pick<RefreshTokenRecord, 'user' | 'userId' | 'provider' | 'family' | 'impersonation' | 'notAfter'>, claims: CustomClaims, expiresIn: number = ctx.lifetimes.access): Promise<{ token: string, expiresIn: number, payload: AuthClaims }> {
  await pastStaleMark(ctx, record.userId)
  const own = record.impersonation ? {} : await featureSessionClaims(ctx, { userId: record.userId, sid: record.family })
  const payload = buildAccessClaims({ ...record.user, sub: record.userId }, record.provider, { ...withoutFeatureClaims(ctx, claims), ...own }, { sid: record.family, impersonation: record.impersonation })
  return ctx.tokens.sign(payload, { expiresIn: accessLifetime(ctx, record, expiresIn) })
}
