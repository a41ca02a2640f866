import { z } from 'zod'
import type { AuthClaims } from '../../types/auth'
import type { AuthContext } from '../../server/lib/core/context'
import { recordTypes } from '../../server/lib/store/record-types'
import { impersonationContextSchema, jsonObject, timestamp, upstreamLoginSchema } from '../../server/lib/core/records/record-schema'

/** Impersonation's record kind (see store/record-types.ts): an impersonation in progress, by family. */
export const IMPERSONATION_RECORDS = recordTypes({ impersonation: 'impersonation' })

const impersonationRecord = z.object({
  family: z.string().min(1),
  context: impersonationContextSchema,
  /** Claims of the requester's token when impersonation began (for the audit trail). */
  requester: jsonObject<AuthClaims>(),
  /** The requester's session (its `sid`): the way back continues it. */
  requesterSession: z.string().min(1),
  /** When the start came with a bearer alone: the requester's access token's expiry, past which the way back's token ends. */
  notAfter: timestamp.optional(),
  /** The OpenID provider login of the requester's session (read from its refresh cookie), which the way back keeps. */
  upstream: upstreamLoginSchema.optional(),
  targetSub: z.string(),
  startedAt: timestamp,
  expiresAt: timestamp,
})

/** The only way back, taken only with the impersonated session's refresh cookie: a leaked impersonated token never yields the requester's session. */
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
