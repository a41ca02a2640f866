/**
 * Checking an enrolled user's second factor: the failure budget, then a TOTP code (a step works once)
 * or a recovery code (claimed atomically, then saved away).
 */
import type { H3Event } from 'h3'
import type { TwoFactorFailureReason, TwoFactorMethod, TwoFactorState } from '../../types/auth'
import type { AuthContext } from '../../server/lib/core/context'
import { tooMany } from '../../server/lib/edge/rate-limit'
import { retryAfterOf } from '../../server/lib/edge/rate-counter'
import { claimRecoveryCode, claimTimeStep, reserveTwoFactorFailure, TWO_FACTOR_RECORDS } from './two-factor-records'
import { findRecoveryCode, matchTimeStep, secretBox } from './secret'
import { findTwoFactorState, parametersOf, saveTwoFactorState } from './two-factor-state'
import { emitHook } from '../../server/lib/core/handlers'
import { securityEvent } from '../../server/lib/edge/security-event'

export type SecondFactorInput = { code: string, recoveryCode?: undefined } | { recoveryCode: string, code?: undefined }

export type CheckResult
  = | { ok: true, method: TwoFactorMethod }
    | { ok: false, reason: Exclude<TwoFactorFailureReason, 'failure_budget_exhausted' | 'too_many_attempts' | 'binding_mismatch'> }

/** How long a used time step stays marked: every step the window can still accept, and one more. */
export function stepMarkerTtl(period: number, window: number): number {
  return (2 * window + 2) * period
}

export async function claimTotpCode(ctx: AuthContext, userId: string, secret: string, params: ReturnType<typeof parametersOf>, code: string): Promise<'ok' | 'invalid_code' | 'replayed_code'> {
  const window = ctx.options.twoFactor.window
  // Apps show codes as `123 456`: spaces typed with them are not part of the code.
  const step = matchTimeStep(secret, params, code.replace(/\s+/g, ''), window)
  if (step === null) return 'invalid_code'
  return await claimTimeStep(ctx, userId, secret, step, stepMarkerTtl(params.period, window)) ? 'ok' : 'replayed_code'
}

/** Checks a second factor of an enrolled user; a secret sealed under a previous key is saved again under the current one. */
export async function checkSecondFactor(ctx: AuthContext, event: H3Event, userId: string, state: TwoFactorState, input: SecondFactorInput, stage: 'login' | 'regenerate' | 'disable'): Promise<CheckResult> {
  const { maxFailures, failureWindow } = ctx.options.twoFactor
  let reservation: { release: () => Promise<void> } | undefined
  // Only TOTP codes draw on the budget: a recovery code (~50 bits) cannot be guessed, and stays the way out of a spent budget.
  if (maxFailures > 0 && input.code !== undefined) {
    const reserved = await reserveTwoFactorFailure(ctx, userId, maxFailures, failureWindow)
    if (!reserved.granted) {
      await securityEvent(ctx, event, { type: 'lockout', outcome: 'failure', actor: stage === 'login' ? null : userId, subject: userId, details: { reason: 'budget_exhausted', stage } })
      await emitHook(ctx, 'svc:twoFactor:failed', { userId, stage, reason: 'failure_budget_exhausted', event })
      throw tooMany(await retryAfterOf(ctx, ctx.store.key(TWO_FACTOR_RECORDS.twoFactorFailures, userId), failureWindow))
    }
    reservation = reserved
  }
  const result = input.code !== undefined
    ? await checkTotp(ctx, event, userId, state, input.code)
    : await checkRecovery(ctx, event, userId, state, input.recoveryCode)
  if (result.ok) await reservation?.release()
  else {
    // At login the flow reports the refused login (two-factor-flow.ts); elsewhere the change it would have allowed.
    if (stage !== 'login') await securityEvent(ctx, event, { type: REFUSED_CHANGE[stage], outcome: 'failure', actor: userId, details: { reason: result.reason } })
    await emitHook(ctx, 'svc:twoFactor:failed', { userId, stage, reason: result.reason, event })
  }
  return result
}

/** The security event of a change a wrong second factor refused. */
const REFUSED_CHANGE = { regenerate: 'two_factor.recovery_codes_regenerated', disable: 'two_factor.disabled' } as const

async function checkTotp(ctx: AuthContext, event: H3Event, userId: string, state: TwoFactorState, code: string): Promise<CheckResult> {
  const opened = secretBox(ctx).open(userId, state.secret)
  if (!opened) {
    ctx.logger.warn('A second-factor secret does not decrypt with the configured keys (twoFactor.secret and previousSecrets, else token.secret and previousSecrets)')
    return { ok: false, reason: 'invalid_code' }
  }
  const claimed = await claimTotpCode(ctx, userId, opened.secret, parametersOf(state), code)
  if (claimed !== 'ok') return { ok: false, reason: claimed }
  if (opened.stale) {
    await saveTwoFactorState(userId, { ...state, secret: secretBox(ctx).seal(userId, opened.secret) }, event, 'secret_resealed').catch((error: unknown) => {
      ctx.logger.warn('Saving a second-factor secret under the current key failed (it is tried again at the next login)', error)
    })
  }
  return { ok: true, method: 'code' }
}

async function checkRecovery(ctx: AuthContext, event: H3Event, userId: string, state: TwoFactorState, typed: string): Promise<CheckResult> {
  const hash = findRecoveryCode(ctx, userId, typed, state.recoveryCodes)
  if (!hash) return { ok: false, reason: 'invalid_code' }
  if (!(await claimRecoveryCode(ctx, userId, hash))) return { ok: false, reason: 'replayed_code' }
  // The freshest state, without the code; codes regenerated or the factor turned off meanwhile: no longer one.
  const fresh = await findTwoFactorState(ctx, userId, event)
  if (!fresh || !fresh.recoveryCodes.includes(hash)) return { ok: false, reason: 'invalid_code' }
  const recoveryCodes = fresh.recoveryCodes.filter(stored => stored !== hash)
  await saveTwoFactorState(userId, { ...fresh, recoveryCodes }, event, 'recovery_code_used')
  await securityEvent(ctx, event, { type: 'two_factor.recovery_code_used', actor: userId, details: { remaining: recoveryCodes.length } })
  await emitHook(ctx, 'svc:twoFactor:recoveryCodeUsed', { userId, remaining: recoveryCodes.length, event })
  return { ok: true, method: 'recovery_code' }
}
