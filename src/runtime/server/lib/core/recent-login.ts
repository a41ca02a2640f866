/**
 * Step-up for changes to how a user logs in (registering or deleting a passkey, every change of
 * the second factor): the caller's session must have logged in recently (`sessions.recentLogin`),
 * so that an access token stolen from an older session cannot plant or remove a login method.
 *
 * Only a real authentication moves this clock: a session's login time is when its family was
 * created by a login, and nothing derived from a token moves it (a refresh keeps the family, the
 * way back from an impersonation continues the requester's session, and an impersonated session
 * never counts as a login of its target).
 */
import type { AuthClaims } from '../../../types/auth'
import type { AuthContext } from './context'
import { authError } from '../edge/errors'
import { isFamilyRevoked } from './records/refresh-token'
import { listSessionEntries, type SessionEntry } from './records/user-sessions'

/** The live session the token's `sid` names in its user's map; null when it has none, or it ended (revoked, expired). */
export async function liveSessionOf(ctx: AuthContext, claims: AuthClaims): Promise<SessionEntry | null> {
  if (typeof claims.sid !== 'string' || claims.sid === '') return null
  const entry = (await listSessionEntries(ctx, claims.sub)).find(candidate => candidate.id === claims.sid)
  return entry && !(await isFamilyRevoked(ctx, entry.id)) ? entry : null
}

/**
 * When the login behind `claims` happened (epoch ms): the start of its session (`sid`); for a token
 * without a session (one the host minted), its issue time. Null when the session has ended, and
 * for an impersonated token (nobody logged in as its subject).
 */
export async function loginTimeOf(ctx: AuthContext, claims: AuthClaims): Promise<number | null> {
  if (claims.impersonation) return null
  if (typeof claims.sid === 'string' && claims.sid !== '') return (await liveSessionOf(ctx, claims))?.createdAt ?? null
  return typeof claims.iat === 'number' ? claims.iat * 1000 : null
}

/**
 * Refuses (403 `reauthentication_required`, logged as a security event) unless the login behind
 * `claims` is at most `sessions.recentLogin` old. `action` names the change in the log.
 */
export async function requireRecentLogin(ctx: AuthContext, claims: AuthClaims, action: string): Promise<void> {
  const loggedInAt = await loginTimeOf(ctx, claims)
  const age = loggedInAt === null ? null : Date.now() - loggedInAt
  if (age !== null && age <= ctx.lifetimes.recentLogin * 1000) return
  ctx.logger.security('reauthentication_required', { action, ageSeconds: age === null ? null : Math.round(age / 1000) })
  throw authError('reauthentication_required')
}
