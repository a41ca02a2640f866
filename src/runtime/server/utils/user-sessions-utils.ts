import type { AuthSession } from '../../types/auth'
import { listSessions, revokeSession, revokeSessions } from '../lib/core/session-list'
import { useAuthContext } from './auth-context'

/**
 * The live sessions of a user, most recently used first, for the host's own pages (an admin's
 * user view). Sessions opened by impersonating the user are listed too, with `impersonatedBy`.
 * No session is `current`.
 */
export async function listUserSessions(userId: string): Promise<AuthSession[]> {
  return listSessions(await useAuthContext(), userId)
}

/**
 * Ends one session of a user (its refresh token stops working, its access tokens are refused).
 * False when the user has no such live session. `svc:session:revoked` runs with reason `host`.
 */
export async function revokeUserSession(userId: string, sessionId: string): Promise<boolean> {
  return revokeSession(await useAuthContext(), userId, sessionId, 'host')
}

/**
 * Ends every session of a user (for example when an admin locks the account), or every one but
 * `except`. Returns how many were ended. `svc:session:revoked` runs for each with reason `host`.
 */
export async function revokeUserSessions(userId: string, options: { except?: string } = {}): Promise<number> {
  return revokeSessions(await useAuthContext(), userId, 'host', options)
}
