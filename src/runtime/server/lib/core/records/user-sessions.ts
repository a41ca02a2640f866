import type { z } from 'zod'
import type { AuthContext } from '../context'
import { CORE_RECORDS } from './core-records'
import { storedSessionEntry, type sessionEntry } from './refresh-token-schema'

export { sessionClientSchema, type SessionClient } from './record-schema'

export { sessionIdSchema } from '../../edge/request-schemas'

export type SessionEntry = z.output<typeof sessionEntry> & { id: string, expiresAt: number }

/**
 * The sessions of one user: one map per user (keyed by an HMAC of the user id), one entry per
 * session (token family), written with every token of the session and removed when it is
 * revoked. Finding a user's sessions reads this one map: O(sessions of the user), never a scan.
 *
 * At login the entry is written before the token; a rotation stores its marker as the entry in
 * the same commit that stores the successor token (see `rotateRefreshToken`), and an entry is
 * removed after the session is marked revoked, so a live session is never missing from its
 * user's map. What a failure or a race can leave is an entry without a live session: a login
 * whose token write failed removes its entry again (a crash can leave it until it expires), and
 * a refresh under way while its session was revoked can write the entry back, which listing
 * drops (it checks the revoked mark of each entry).
 */
export const sessionMapKey = (ctx: AuthContext, userId: string) => ctx.store.key(CORE_RECORDS.userSessions, userId)

export async function putSessionEntry(ctx: AuthContext, userId: string, family: string, entry: z.input<typeof sessionEntry>, ttlSeconds: number): Promise<void> {
  await ctx.store.mapSet(sessionMapKey(ctx, userId), family, entry, ttlSeconds)
}

export async function listSessionEntries(ctx: AuthContext, userId: string): Promise<SessionEntry[]> {
  const entries = await ctx.store.mapEntries(sessionMapKey(ctx, userId), storedSessionEntry)
  return entries.map(({ field, value, expiresAt }) => ({ ...value, id: field, expiresAt }))
}

export async function removeSessionEntry(ctx: AuthContext, userId: string, family: string): Promise<void> {
  await ctx.store.mapDelete(sessionMapKey(ctx, userId), family)
}
