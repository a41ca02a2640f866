import { z } from 'zod'
import type { AuthContext } from '../context'
import { randomToken } from '../../store/crypto'
import { CORE_RECORDS } from './core-records'
import { timestamp } from './record-schema'

const resetSessionRecord = z.object({
  email: z.string().min(1),
  userId: z.string().optional(),
  /** HMAC of the binding of the browser that verified the code (see code-binding). */
  binding: z.string().optional(),
  createdAt: timestamp,
})

/** Created when a reset code is verified; lets the browser set a new password once. */
export type ResetSessionRecord = z.output<typeof resetSessionRecord>

/** Lifetime of a reset session (5 minutes). */
export const RESET_SESSION_TTL = 300

export async function createResetSession(ctx: AuthContext, input: Omit<ResetSessionRecord, 'createdAt'>): Promise<string> {
  const sessionId = randomToken(32)
  await ctx.store.write(ctx.store.key(CORE_RECORDS.resetSession, sessionId), { ...input, createdAt: Date.now() }, RESET_SESSION_TTL)
  return sessionId
}

/** Reads a live session without consuming it (to validate input first). */
export function readResetSession(ctx: AuthContext, sessionId: string): Promise<ResetSessionRecord | null> {
  return ctx.store.read(ctx.store.key(CORE_RECORDS.resetSession, sessionId), resetSessionRecord)
}

/** Consumes a session atomically: of concurrent uses, exactly one gets it. */
export function consumeResetSession(ctx: AuthContext, sessionId: string): Promise<ResetSessionRecord | null> {
  return ctx.store.take(ctx.store.key(CORE_RECORDS.resetSession, sessionId), resetSessionRecord)
}
