/**
 * Step-up for changes to login methods: the session must have logged in within `sessions.recentLogin`,
 * so a token stolen from an older session cannot plant or remove one (a refresh never moves this clock).
 */
import type { H3Event } from 'h3'
import type { AuthClaims } from '../../../types/auth'
import type { AuthContext } from './context'
import { authError } from '../edge/errors'
import { requestRefused } from '../edge/security-event'
import { isFamilyRevoked } from './records/refresh-token'
import { listSessionEntries, type SessionEntry } from './records/user-sessions'

/** The live session the token's `sid` names in its user's map; null when it has none, or it ended (revoked, expired). */
export async function liveSessionOf(ctx: AuthContext, claims: AuthClaims): Promise<SessionEntry | null> {
  if (typeof claims.sid !== 'string' || claims.sid === '') return null
  const entry = (await listSessionEntries(ctx, claims.sub)).find(candidate => candidate.id === claims.sid)
  return entry && !(await isFamilyRevoked(ctx, entry.id)) ? entry : null
}

/** When the login behind `claims` happened (epoch ms); null when the session has ended or is impersonated. */
export async function loginTimeOf(ctx: AuthContext, claims: AuthClaims): Promise<number | null> {
  if (claims.impersonation) return null
  if (typeof claims.sid === 'string' && claims.sid !== '') return (await liveSessionOf(ctx, claims))?.createdAt ?? null
  return typeof claims.iat === 'number' ? claims.iat * 1000 : null
}

/** Refuses (403 `reauthentication_required`, a `request.refused` event) unless the login behind `claims` is recent enough. */
export async function requireRecentLogin(ctx: AuthContext, event: H3Event, claims: AuthClaims, action: string): Promise<void> {
  const loggedInAt = await loginTimeOf(ctx, claims)
  const age = loggedInAt === null ? null : Date.now() - loggedInAt
  if (age !== null && age <= ctx.lifetimes.recentLogin * 1000) return
  await requestRefused(ctx, event, 'recent_login', { caller: claims, details: { action, ageSeconds: age === null ? null : Math.round(age / 1000) } })
  throw authError('reauthentication_required')
}
