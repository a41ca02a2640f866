import type { AuthSession } from '../../types/auth'
import { listSessions, revokeSession, revokeSessions } from '../lib/core/session-list'
import { useAuthContext } from './auth-context'

/** The live sessions of a user, most recently used first (impersonations with `impersonatedBy`; none `current`). */
export async function listUserSessions(userId: string): Promise<AuthSession[]> {
  return listSessions(await useAuthContext(), userId)
}

/** Ends one session of a user; false when there is no such live session (`svc:session:revoked`, reason `host`). */
export async function revokeUserSession(userId: string, sessionId: string): Promise<boolean> {
  return revokeSession(await useAuthContext(), userId, sessionId, 'host')
}

/** Ends every session of a user, or every one but `except`; returns how many (reason `host`). */
export async function revokeUserSessions(userId: string, options: { except?: string } = {}): Promise<number> {
  return revokeSessions(await useAuthContext(), userId, 'host', options)
}
