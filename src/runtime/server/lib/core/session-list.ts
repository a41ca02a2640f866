import type { H3Event } from 'h3'
import type { AuthClaims, AuthSession, SessionRevocationReason } from '../../../types/auth'
import { requireCaller } from './authenticate'
import type { AuthContext } from './context'
import { authError, message } from '../edge/errors'
import { isFamilyRevoked, revokeFamily } from './records/refresh-token'
import { listSessionEntries, removeSessionEntry, type SessionEntry } from './records/user-sessions'

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

/** What a revocation of sessions leaves alone (`own`: impersonations of the user), the request that asked, and who (another user: an administrator). */
export interface RevokeOptions {
  own?: boolean
  event?: H3Event
  caller?: AuthClaims
}

/** Ends one session of a user. False when there is no such live session (or, with `own`, an impersonation), or another request ended it first. */
export async function revokeSession(ctx: AuthContext, userId: string, sessionId: string, reason: SessionRevocationReason, options: RevokeOptions = {}): Promise<boolean> {
  const entry = (await listSessionEntries(ctx, userId)).find(e => e.id === sessionId)
  if (!entry || (options.own && entry.impersonatedBy)) return false
  // Revoked already (an entry a racing refresh wrote back): gone, nothing to end.
  if (await isFamilyRevoked(ctx, sessionId)) {
    await removeSessionEntry(ctx, userId, sessionId)
    return false
  }
  return revokeFamily(ctx, sessionId, userId, reason, options.event, options.caller)
}

/** Ends every session of a user but `except` (`own`: not impersonations); returns how many. */
export async function revokeSessions(ctx: AuthContext, userId: string, reason: SessionRevocationReason, options: RevokeOptions & { except?: string } = {}): Promise<number> {
  const entries = (await liveEntries(ctx, userId))
    .filter(entry => entry.id !== options.except && !(options.own && entry.impersonatedBy))
  const ended = await Promise.all(entries.map(entry => revokeFamily(ctx, entry.id, userId, reason, options.event)))
  return ended.filter(Boolean).length
}

/** The caller of a session endpoint: a valid bearer token, never impersonated (403 `impersonated_session`). */
export async function requireSessionOwner(event: H3Event, ctx: AuthContext): Promise<AuthClaims & { sid?: string }> {
  if (!ctx.options.tokenRefresh.enabled) throw authError('not_found', message('sessions_need_refresh'))
  const claims = await requireCaller(event, ctx, true)
  return { ...claims, sid: typeof claims.sid === 'string' ? claims.sid : undefined }
}
