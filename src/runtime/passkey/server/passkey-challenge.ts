import { z } from 'zod'
import type { AuthContext } from '../../server/lib/core/context'
import { recordTypes } from '../../server/lib/store/record-types'
import { timestamp } from '../../server/lib/core/records/record-schema'

/** The passkey ceremonies' record kind (see store/record-types.ts): a challenge awaiting its answer, by ceremony and challenge. */
export const PASSKEY_RECORDS = recordTypes({ passkeyChallenge: 'passkey-challenge' })

export const PASSKEY_CHALLENGE_TTL = 300

const CEREMONIES = ['registration', 'authentication'] as const

export type PasskeyCeremony = typeof CEREMONIES[number]

const passkeyChallengeRecord = z.object({
  ceremony: z.enum(CEREMONIES),
  /** Registration: the user (`sub`) whose bearer token asked for the options. */
  userId: z.string().min(1).optional(),
  /** Authentication: HMAC of the binding of the browser that asked (see code-binding). */
  binding: z.string().min(1).optional(),
  redirect: z.string().optional(),
  /** The relying party the options named: the answer must be signed for it. */
  rpID: z.string().min(1),
  origins: z.array(z.string().min(1)).min(1),
  /** `required`: an answer without user verification is refused. */
  requireUserVerification: z.boolean(),
  createdAt: timestamp,
})

/** What a passkey challenge stands for until answered: keyed by an HMAC, consumed atomically. */
export type PasskeyChallengeRecord = z.output<typeof passkeyChallengeRecord>

const challengeKey = (ctx: AuthContext, ceremony: PasskeyCeremony, challenge: string) => ctx.store.key(PASSKEY_RECORDS.passkeyChallenge, `${ceremony}:${challenge}`)

export async function savePasskeyChallenge(ctx: AuthContext, challenge: string, record: Omit<PasskeyChallengeRecord, 'createdAt'>): Promise<void> {
  await ctx.store.write(challengeKey(ctx, record.ceremony, challenge), { ...record, createdAt: Date.now() }, PASSKEY_CHALLENGE_TTL)
}

/** Consumes a challenge atomically (single use): null when unknown, expired or used already. */
export function takePasskeyChallenge(ctx: AuthContext, ceremony: PasskeyCeremony, challenge: string): Promise<PasskeyChallengeRecord | null> {
  return ctx.store.take(challengeKey(ctx, ceremony, challenge), passkeyChallengeRecord)
}
