/**
 * Step-up for changes that add a way of logging in (registering a passkey, enrolling a second
 * factor): the caller's session must have logged in recently (`sessions.recentLogin`), so that an
 * access token stolen from an older session cannot plant the thief's own login method.
 */
import type { AuthClaims } from '../../types/auth'
import type { AuthContext } from './context'
import { authError } from './errors'
import { listSessionEntries } from './records/user-sessions'

/**
 * When the login behind `claims` happened (epoch ms): the start of its session (`sid`), which
 * refreshes do not move; for a token without a session (one the host minted), its issue time.
 * Null when the session is no longer listed (ended, or expired).
 */
export async function loginTimeOf(ctx: AuthContext, claims: AuthClaims): Promise<number | null> {
  if (typeof claims.sid === 'string' && claims.sid !== '') {
    const entry = (await listSessionEntries(ctx, claims.sub)).find(candidate => candidate.id === claims.sid)
    return entry?.createdAt ?? null
  }
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
