import { isIP } from 'node:net'
import type { H3Event } from 'h3'
import { getRequestHeader } from 'h3'
import type { AuthClaims, AuthSession, SessionRevocationReason } from '../../../types/auth'
import { requireCaller } from './authenticate'
import type { AuthContext } from './context'
import { authError } from '../edge/errors'
import { ipv6Groups, normalizeAddress, clientAddressOf } from '../edge/rate-limit'
import { isFamilyRevoked, revokeFamily } from './records/refresh-token'
import { listSessionEntries, removeSessionEntry, type SessionClient, type SessionEntry } from './records/user-sessions'

const BROWSERS: ReadonlyArray<[RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\b(?:OPR|Opera)\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\b(?:Firefox|FxiOS)\//, 'Firefox'],
  [/\b(?:Chrome|CriOS|Chromium|HeadlessChrome)\//, 'Chrome'],
  [/\bVersion\/[\d.].*\bSafari\//, 'Safari'],
]

const SYSTEMS: ReadonlyArray<[RegExp, string]> = [
  [/\b(?:iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
]

/** Browser and system family of a user agent (`Firefox on Linux`), no versions; undefined when unknown. */
export function userAgentFamily(userAgent: string): string | undefined {
  const text = userAgent.slice(0, 512)
  const browser = BROWSERS.find(([pattern]) => pattern.test(text))?.[1]
  const system = SYSTEMS.find(([pattern]) => pattern.test(text))?.[1]
  if (browser && system) return `${browser} on ${system}`
  return browser ?? system
}

/** Network prefix of an address: IPv4 `/24`, IPv6 `/48` (IPv4-mapped IPv6 as IPv4). */
export function addressPrefix(address: string): string | undefined {
  const plain = normalizeAddress(address)
  if (isIP(plain) === 4) return `${plain.split('.').slice(0, 3).join('.')}.0/24`
  if (isIP(plain) !== 6) return undefined
  const groups = [...ipv6Groups(plain).slice(0, 3), 0, 0, 0, 0, 0]
  // The WHATWG URL serializer writes IPv6 in its canonical text form (RFC 5952).
  return `${new URL(`http://[${groups.map(g => g.toString(16)).join(':')}]/`).hostname.slice(1, -1)}/48`
}

/** The coarse client description stored with a new session (see {@link SessionClient}). */
export function describeClient(event: H3Event, ctx: AuthContext): SessionClient {
  return {
    userAgent: userAgentFamily(getRequestHeader(event, 'user-agent') ?? ''),
    address: addressPrefix(clientAddressOf(ctx, event)),
  }
}

function toPublic(entry: SessionEntry, currentSid: string | undefined, withImpersonator: boolean): AuthSession {
  return {
    id: entry.id,
    current: entry.id === currentSid,
    createdAt: new Date(entry.createdAt).toISOString(),
    lastUsedAt: new Date(entry.lastUsedAt).toISOString(),
    ...(entry.provider ? { provider: entry.provider } : {}),
    client: { ...entry.client },
    ...(withImpersonator && entry.impersonatedBy ? { impersonatedBy: entry.impersonatedBy } : {}),
  }
}

const byNewest = (a: SessionEntry, b: SessionEntry) => b.lastUsedAt - a.lastUsedAt

/** Entries of a user's map whose sessions are live; one a refresh wrote back after its revocation is removed. */
async function liveEntries(ctx: AuthContext, userId: string): Promise<SessionEntry[]> {
  const entries = await listSessionEntries(ctx, userId)
  const revoked = await Promise.all(entries.map(entry => isFamilyRevoked(ctx, entry.id)))
  await Promise.all(entries.filter((_, i) => revoked[i]).map(entry => removeSessionEntry(ctx, userId, entry.id)))
  return entries.filter((_, i) => !revoked[i])
}

/** Live sessions of a user, most recently used first; `own` leaves out impersonations of the user. */
export async function listSessions(ctx: AuthContext, userId: string, options: { currentSid?: string, own?: boolean } = {}): Promise<AuthSession[]> {
  const entries = (await liveEntries(ctx, userId)).filter(entry => !(options.own && entry.impersonatedBy))
  return entries.sort(byNewest).map(entry => toPublic(entry, options.currentSid, !options.own))
}

/** Ends one session of a user. False when there is no such live session (or, with `own`, an impersonation). */
export async function revokeSession(ctx: AuthContext, userId: string, sessionId: string, reason: SessionRevocationReason, options: { own?: boolean } = {}): Promise<boolean> {
  const entry = (await listSessionEntries(ctx, userId)).find(e => e.id === sessionId)
  if (!entry || (options.own && entry.impersonatedBy)) return false
  // Revoked already (an entry a racing refresh wrote back): gone, nothing to end.
  if (await isFamilyRevoked(ctx, sessionId)) {
    await removeSessionEntry(ctx, userId, sessionId)
    return false
  }
  await revokeFamily(ctx, sessionId, userId, reason)
  return true
}

/** Ends every session of a user but `except` (`own`: not impersonations); returns how many. */
export async function revokeSessions(ctx: AuthContext, userId: string, reason: SessionRevocationReason, options: { except?: string, own?: boolean } = {}): Promise<number> {
  const entries = (await liveEntries(ctx, userId))
    .filter(entry => entry.id !== options.except && !(options.own && entry.impersonatedBy))
  await Promise.all(entries.map(entry => revokeFamily(ctx, entry.id, userId, reason)))
  return entries.length
}

/** The caller of a session endpoint: a valid bearer token, never impersonated (403 `impersonated_session`). */
export async function requireSessionOwner(event: H3Event, ctx: AuthContext): Promise<AuthClaims & { sid?: string }> {
  if (!ctx.options.tokenRefresh.enabled) throw authError('not_found', 'Sessions need token refresh')
  const claims = await requireCaller(event, ctx, 'manage the user\'s sessions')
  return { ...claims, sid: typeof claims.sid === 'string' ? claims.sid : undefined }
}
