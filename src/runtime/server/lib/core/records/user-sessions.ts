import type { z } from 'zod'
import type { AuthContext } from '../context'
import { CORE_RECORDS } from './core-records'
import { storedSessionEntry, type sessionEntry } from './refresh-token-schema'

export { sessionClientSchema, type SessionClient } from './record-schema'

export { sessionIdSchema } from '../../edge/request-schemas'

export type SessionEntry = z.output<typeof sessionEntry> & { id: string, expiresAt: number }

/**
 * One map per user, one entry per session: written before a token and removed after the revoked mark,
 * so a live session is always listed (entries without one are dropped when listing).
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
