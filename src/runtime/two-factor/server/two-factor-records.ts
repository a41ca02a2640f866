import type { H3Event } from 'h3'
import { z } from 'zod'
import type { AuthUser, CustomClaims, ProviderTokens } from '../../types/auth'
import { browserBindingOf } from '../../server/lib/core/code-binding'
import type { AuthContext } from '../../server/lib/core/context'
import { createSealer, randomToken, type Sealer } from '../../server/lib/store/crypto'
import { stringList } from '../../server/lib/config/string-list'
import { reserveUnits, type Reservation } from '../../server/lib/edge/rate-counter'
import { recordTypes } from '../../server/lib/store/record-types'
import { claimsSchema, timestamp, upstreamLoginSchema, userSchema, type UpstreamLogin } from '../../server/lib/core/records/record-schema'
import { storableUser } from '../../server/lib/core/records/stored-user'
import { oncePer } from '../../shared/values'

/** The second factor's record kinds (see store/record-types.ts). */
export const TWO_FACTOR_RECORDS = recordTypes({
  twoFactorLogin: 'two-factor-login',
  twoFactorAttempts: 'two-factor-attempts',
  twoFactorFailures: 'two-factor-failed',
  twoFactorStep: 'two-factor-step',
  twoFactorEnrolment: 'two-factor-enrol',
  twoFactorRecovery: 'two-factor-recovery',
})

const pendingLoginRecord = z.object({
  id: z.string().min(1),
  /** `sub` of the user: the subject of the tokens the login will issue. */
  userId: z.string().min(1),
  user: userSchema,
  claims: claimsSchema,
  provider: z.string().min(1),
  redirect: z.string().optional(),
  /** Provider tokens for `svc:success`, sealed with a key of their own whether or not records are encrypted. */
  tokens: z.string(),
  /** HMAC of the browser binding (the code cookie) of the browser that passed the first factor. */
  binding: z.string().min(1),
  enrol: z.boolean(),
  /** The OpenID provider login, for the session the code will start. */
  upstream: upstreamLoginSchema.optional(),
  createdAt: timestamp,
})

/** A login that passed its first factor and waits for the second (single use). */
export type PendingLoginRecord = z.output<typeof pendingLoginRecord>

export interface PendingLoginInput {
  userId: string
  user: AuthUser
  claims: CustomClaims
  provider: string
  redirect?: string
  tokens: ProviderTokens
  enrol: boolean
  upstream?: UpstreamLogin
}

const pendingKey = (ctx: AuthContext, id: string) => ctx.store.key(TWO_FACTOR_RECORDS.twoFactorLogin, id)

const TOKENS_PURPOSE = 'nuxt-svc-auth:two-factor-pending-tokens'

/** The sealer of pending logins' provider tokens (`token.previousSecrets` still open them). */
const tokensSealer = oncePer((ctx: AuthContext): Sealer => createSealer(ctx.options.token.secret, stringList(ctx.options.token.previousSecrets), TOKENS_PURPOSE))

/** The provider tokens of a pending login; ones that no longer open read as `{ access_token: '' }`. */
export function pendingLoginTokens(ctx: AuthContext, record: PendingLoginRecord): ProviderTokens {
  const plain = tokensSealer(ctx).open(record.tokens)
  if (plain !== null) {
    try {
      const tokens = JSON.parse(plain) as unknown
      if (tokens && typeof tokens === 'object' && !Array.isArray(tokens)) return tokens as ProviderTokens
    }
    catch {
      // Unreadable: no tokens.
    }
  }
  return { access_token: '' }
}

/** Stores a pending login bound to the browser of `event` and returns its random flow id. */
export async function createPendingLogin(ctx: AuthContext, event: H3Event, input: PendingLoginInput, ttlSeconds: number): Promise<string> {
  const id = randomToken(24)
  const record: PendingLoginRecord = {
    ...input,
    id,
    user: storableUser(input.user),
    tokens: tokensSealer(ctx).seal(JSON.stringify(input.tokens ?? {})),
    binding: browserBindingOf(event, ctx),
    createdAt: Date.now(),
  }
  await ctx.store.write(pendingKey(ctx, id), record, ttlSeconds)
  return id
}

export function readPendingLogin(ctx: AuthContext, id: string): Promise<PendingLoginRecord | null> {
  return ctx.store.read(pendingKey(ctx, id), pendingLoginRecord)
}

/** Consumes a pending login atomically: of concurrent completions, exactly one gets it. */
export function takePendingLogin(ctx: AuthContext, id: string): Promise<PendingLoginRecord | null> {
  return ctx.store.take(pendingKey(ctx, id), pendingLoginRecord)
}

export function countLoginAttempt(ctx: AuthContext, id: string, ttlSeconds: number): Promise<number> {
  return ctx.store.incr(ctx.store.key(TWO_FACTOR_RECORDS.twoFactorAttempts, id), ttlSeconds)
}

export function reserveTwoFactorFailure(ctx: AuthContext, userId: string, max: number, windowSeconds: number): Promise<Reservation> {
  return reserveUnits(ctx, [{ key: ctx.store.key(TWO_FACTOR_RECORDS.twoFactorFailures, userId), max }], windowSeconds)
}

/** Marks a TOTP time step as used (true the first time only, atomic); the secret is in the key, so a new enrolment starts afresh. */
export function claimTimeStep(ctx: AuthContext, userId: string, secret: string, step: number, ttlSeconds: number): Promise<boolean> {
  return ctx.store.writeIfAbsent(ctx.store.key(TWO_FACTOR_RECORDS.twoFactorStep, `${userId}\0${secret}\0${step}`), Date.now(), ttlSeconds)
}

/** How long a used recovery code stays claimed: long enough that a concurrent stale save cannot revive it. */
export const RECOVERY_CLAIM_TTL = 400 * 24 * 3600

/** Claims a recovery code (by its HMAC) of a user: true for the first use only (atomic). */
export function claimRecoveryCode(ctx: AuthContext, userId: string, codeHash: string): Promise<boolean> {
  return ctx.store.writeIfAbsent(ctx.store.key(TWO_FACTOR_RECORDS.twoFactorRecovery, `${userId}\0${codeHash}`), Date.now(), RECOVERY_CLAIM_TTL)
}

const enrolmentRecord = z.object({
  userId: z.string().min(1),
  /** The new TOTP secret, sealed by the second factor's own key (never stored in the clear). */
  secret: z.string().min(1),
  createdAt: timestamp,
})

export type EnrolmentRecord = z.output<typeof enrolmentRecord>

/** Whose enrolment: a logged-in user's (settings) or the one of a pending login (flow id). */
export type EnrolmentOwner = { userId: string } | { flow: string }

const enrolmentKey = (ctx: AuthContext, owner: EnrolmentOwner) => ctx.store.key(TWO_FACTOR_RECORDS.twoFactorEnrolment, 'flow' in owner ? `flow\0${owner.flow}` : `user\0${owner.userId}`)

export async function savePendingEnrolment(ctx: AuthContext, owner: EnrolmentOwner, record: Omit<EnrolmentRecord, 'createdAt'>, ttlSeconds: number): Promise<void> {
  await ctx.store.write(enrolmentKey(ctx, owner), { ...record, createdAt: Date.now() }, ttlSeconds)
}

export function readPendingEnrolment(ctx: AuthContext, owner: EnrolmentOwner): Promise<EnrolmentRecord | null> {
  return ctx.store.read(enrolmentKey(ctx, owner), enrolmentRecord)
}

/** Consumes the pending enrolment of an owner atomically: of concurrent confirmations one wins. */
export function takePendingEnrolment(ctx: AuthContext, owner: EnrolmentOwner): Promise<EnrolmentRecord | null> {
  return ctx.store.take(enrolmentKey(ctx, owner), enrolmentRecord)
}
