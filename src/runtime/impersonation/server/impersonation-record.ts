import { z } from 'zod'
import type { AuthClaims } from '../../types/auth'
import type { AuthContext } from '../../server/lib/core/context'
import { recordTypes } from '../../server/lib/store/record-types'
import { impersonationContextSchema, jsonObject, timestamp } from '../../server/lib/core/records/record-schema'

/** Impersonation's record kind (see store/record-types.ts): an impersonation in progress, by family. */
export const IMPERSONATION_RECORDS = recordTypes({ impersonation: 'impersonation' })

const impersonationRecord = z.object({
  family: z.string().min(1),
  context: impersonationContextSchema,
  /** Claims of the requester's token when impersonation began (for the audit trail). */
  requester: jsonObject<AuthClaims>(),
  /** The requester's session (its `sid`): the way back continues it. */
  requesterSession: z.string().min(1),
  /**
   * Set when the start came without the refresh cookie of that session (a bearer alone): when the
   * requester's access token expired (epoch ms). The token the way back hands out then sits beside
   * the owner's and ends at this time, so a stolen access token never yields a lasting session.
   */
  notAfter: timestamp.optional(),
  targetSub: z.string(),
  startedAt: timestamp,
  expiresAt: timestamp,
})

/**
 * Server-side record of a running impersonation, keyed by the session (refresh token family) of
 * the impersonated session. It is the only way back: POST /auth/unimpersonate takes it atomically
 * (single use), and only with the impersonation's own refresh cookie, so a leaked impersonated
 * access token alone can never be turned back into the requester's session. The way back never
 * creates a session: it continues the requester's own, which must still be live.
 */
export type ImpersonationRecord = z.output<typeof impersonationRecord>

export async function saveImpersonation(ctx: AuthContext, record: ImpersonationRecord): Promise<void> {
  await ctx.store.write(ctx.store.key(IMPERSONATION_RECORDS.impersonation, record.family), record, Math.max(1, (record.expiresAt - Date.now()) / 1000))
}

/** Consumes the record atomically: of concurrent unimpersonations, exactly one gets it. */
export function takeImpersonation(ctx: AuthContext, family: string): Promise<ImpersonationRecord | null> {
  return ctx.store.take(ctx.store.key(IMPERSONATION_RECORDS.impersonation, family), impersonationRecord)
}

export async function removeImpersonation(ctx: AuthContext, family: string): Promise<void> {
  await ctx.store.remove(ctx.store.key(IMPERSONATION_RECORDS.impersonation, family))
}
