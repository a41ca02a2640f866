/** The host's side of the second factor: its handlers and the shape of the state it keeps. */
import type { H3Event } from 'h3'
import { z } from 'zod'
import type { AuthUser, TwoFactorSaveReason, TwoFactorState } from '../../types/auth'
import type { AuthContext } from '../../server/lib/core/context'
import { getAuthHandlers, requiredHandler } from '../../server/lib/core/handlers'
import { TWO_FACTOR_ALGORITHMS } from './two-factor-options'
import type { TotpParameters } from './secret'

const stateSchema = z.object({
  version: z.literal(1),
  secret: z.string().min(1),
  recoveryCodes: z.array(z.string()),
  algorithm: z.enum(TWO_FACTOR_ALGORITHMS),
  digits: z.number().int().min(6).max(8),
  period: z.number().int().min(1).max(300),
  enabledAt: z.string(),
  recoveryCodesAt: z.string(),
})

/** A user's state from the host, checked: null when none; any other shape fails the request (never turns the factor off). */
export async function findTwoFactorState(ctx: AuthContext, userId: string, event: H3Event): Promise<TwoFactorState | null> {
  const found: unknown = await requiredHandler('twoFactor', 'find')(userId, { event })
  if (found === null || found === undefined) return null
  const parsed = stateSchema.safeParse(found)
  if (!parsed.success) throw new Error('[svc-auth] twoFactor.find returned a value that is not a second-factor state (a TwoFactorState object or null).')
  return parsed.data
}

export async function saveTwoFactorState(userId: string, state: TwoFactorState | null, event: H3Event, reason: TwoFactorSaveReason): Promise<void> {
  await requiredHandler('twoFactor', 'save')(userId, state, { event, reason })
}

export function parametersOf(state: Pick<TwoFactorState, 'algorithm' | 'digits' | 'period'>): TotpParameters {
  return { algorithm: state.algorithm, digits: state.digits, period: state.period }
}

export function newState(sealedSecret: string, recoveryHashes: string[], params: TotpParameters): TwoFactorState {
  const now = new Date().toISOString()
  return { version: 1, secret: sealedSecret, recoveryCodes: recoveryHashes, ...params, enabledAt: now, recoveryCodesAt: now }
}

/** Whether this login asks for a second factor, and whether the user must enrol first. */
export async function secondFactorNeeded(ctx: AuthContext, user: AuthUser & { sub: string }, context: { provider: string, event: H3Event }): Promise<{ enrol: boolean } | null> {
  const state = await findTwoFactorState(ctx, user.sub, context.event)
  if (state) return { enrol: false }
  const isRequired = getAuthHandlers().twoFactor?.isRequired
  const required = isRequired ? (await isRequired(user, context)) === true : ctx.options.twoFactor.requireForAll === true
  return required ? { enrol: true } : null
}
