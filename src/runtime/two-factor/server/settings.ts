/** The logged-in user's second-factor settings (bearer): status, enrolment, new recovery codes, turning it off. */
import type { H3Event } from 'h3'
import type { AuthClaims, TwoFactorState } from '../../types/auth'
import { requireCaller } from '../../server/lib/core/authenticate'
import type { AuthContext } from '../../server/lib/core/context'
import { authError } from '../../server/lib/edge/errors'
import { passwordHandlers } from '../../password/server/password-handlers'
import { isPasswordEnabled } from '../../password/server/password-options'
import { checkPassword } from '../../password/server/password-check'
import { requireEmail } from '../../server/lib/edge/email'
import { usePasswordRuntime } from '../../password/server/password-runtime'
import { tooMany } from '../../server/lib/edge/rate-limit'
import { retryAfterOf } from '../../server/lib/edge/rate-counter'
import { TWO_FACTOR_RECORDS, reserveTwoFactorFailure } from './two-factor-records'
import { requireRecentLogin } from '../../server/lib/core/recent-login'
import { revokeSessions } from '../../server/lib/core/session-list'
import { checkSecondFactor } from './code-check'
import { confirmEnrolmentCode, newEnrolment } from './two-factor-flow'
import { hashRecoveryCode, newRecoveryCodes } from './secret'
import { findTwoFactorState, saveTwoFactorState } from './two-factor-state'
import { guarded } from '../../server/lib/edge/route-contract'
import { TWO_FACTOR_ROUTES } from './two-factor-routes'
import { emitHook } from '../../server/lib/core/handlers'
import { securityEvent } from '../../server/lib/edge/security-event'

/** The caller's claims: 401 without a valid bearer token, 403 for an impersonated session. */
function owner(ctx: AuthContext, event: H3Event): Promise<AuthClaims> {
  return requireCaller(event, ctx, true)
}

/** A change of how a user logs in ends their other own sessions (one opened before it must not live on). */
async function endOtherSessions(ctx: AuthContext, event: H3Event, claims: AuthClaims): Promise<void> {
  const except = typeof claims.sid === 'string' ? claims.sid : undefined
  await revokeSessions(ctx, claims.sub, 'two_factor_change', { except, own: true, event })
}

/** A recent login is checked before the body and any proof, so a stale session spends no failure budget. */
const recentOwner = (action: string) => async (ctx: AuthContext, event: H3Event): Promise<AuthClaims> => {
  const claims = await owner(ctx, event)
  await requireRecentLogin(ctx, event, claims, action)
  return claims
}

async function enrolledState(ctx: AuthContext, event: H3Event, claims: AuthClaims): Promise<TwoFactorState> {
  const state = await findTwoFactorState(ctx, claims.sub, event)
  if (!state) throw authError('two_factor_not_enabled')
  return state
}

/** GET status → `{ enabled, recoveryCodesLeft }`. */
export const twoFactorStatus = guarded(TWO_FACTOR_ROUTES.status, async (ctx: AuthContext, event) => {
  const claims = await owner(ctx, event)
  const state = await findTwoFactorState(ctx, claims.sub, event)
  return { enabled: state !== null, recoveryCodesLeft: state?.recoveryCodes.length ?? 0 }
})

/** POST enrol → `{ uri, secret }`: a new secret kept as a pending enrolment until a code confirms it. */
export const startEnrolment = guarded(TWO_FACTOR_ROUTES.enrol, async (ctx: AuthContext, event) => {
  const claims = await owner(ctx, event)
  if (await findTwoFactorState(ctx, claims.sub, event)) throw authError('two_factor_already_enabled')
  await requireRecentLogin(ctx, event, claims, 'two_factor_enrol')
  return newEnrolment(ctx, { userId: claims.sub }, claims.sub, claims.email, ctx.options.twoFactor.enrolmentTTL)
})

/** POST confirm `{ code }` → `{ recoveryCodes }` (shown once); the login must still be recent. */
export const confirmEnrolment = guarded(TWO_FACTOR_ROUTES.confirm, async (ctx: AuthContext, event, body, claims) => {
  const confirmed = await confirmEnrolmentCode(ctx, event, { userId: claims.sub }, claims.sub, body.code)
  if (confirmed === 'expired') throw authError('two_factor_enrolment_expired')
  if (confirmed === 'invalid_code') throw authError('two_factor_invalid_code')
  await endOtherSessions(ctx, event, claims)
  await securityEvent(ctx, event, { type: 'two_factor.enrolled', caller: claims, details: { during: 'settings' } })
  await emitHook(ctx, 'svc:twoFactor:enrolled', { userId: claims.sub, during: 'settings', event })
  return { recoveryCodes: confirmed.recoveryCodes }
}, recentOwner('two_factor_enrol'))

/** POST recovery-codes `{ code }` → `{ recoveryCodes }`: the old ones stop working. Needs a recent login. */
export const regenerateRecoveryCodes = guarded(TWO_FACTOR_ROUTES.recoveryCodes, async (ctx: AuthContext, event, body, claims) => {
  const state = await enrolledState(ctx, event, claims)
  const result = await checkSecondFactor(ctx, event, claims.sub, state, { code: body.code }, 'regenerate')
  if (!result.ok) throw authError('two_factor_invalid_code')
  const recoveryCodes = newRecoveryCodes(ctx.options.twoFactor.recoveryCodes)
  const fresh = await findTwoFactorState(ctx, claims.sub, event) ?? state
  await saveTwoFactorState(claims.sub, { ...fresh, recoveryCodes: recoveryCodes.map(c => hashRecoveryCode(ctx, claims.sub, c)), recoveryCodesAt: new Date().toISOString() }, event, 'recovery_codes_regenerated')
  await securityEvent(ctx, event, { type: 'two_factor.recovery_codes_regenerated', caller: claims, details: { count: recoveryCodes.length } })
  await emitHook(ctx, 'svc:twoFactor:recoveryCodesRegenerated', { userId: claims.sub, count: recoveryCodes.length, event })
  return { recoveryCodes }
}, recentOwner('two_factor_recovery_codes'))

/** The account's password, checked like a login (400 `no_password_account` otherwise); a wrong one draws on the failure budget. */
async function checkAccountPassword(ctx: AuthContext, event: H3Event, claims: AuthClaims, password: string): Promise<boolean> {
  const email = typeof claims.email === 'string' && isPasswordEnabled(ctx.options.providers?.password) ? requireEmail(claims.email) : undefined
  if (!email) throw authError('no_password_account')
  const runtime = usePasswordRuntime(ctx)
  const handlers = passwordHandlers()
  const user = await handlers.findUser(email)
  if (typeof user?.hashedPassword !== 'string') throw authError('no_password_account')
  const { maxFailures, failureWindow } = ctx.options.twoFactor
  const reserved = maxFailures > 0 ? await reserveTwoFactorFailure(ctx, claims.sub, maxFailures, failureWindow) : undefined
  if (reserved && !reserved.granted) {
    await securityEvent(ctx, event, { type: 'lockout', outcome: 'failure', caller: claims, details: { reason: 'budget_exhausted', stage: 'disable' } })
    throw tooMany(await retryAfterOf(ctx, ctx.store.key(TWO_FACTOR_RECORDS.twoFactorFailures, claims.sub), failureWindow))
  }
  const valid = await checkPassword(runtime, handlers, password, user.hashedPassword)
  if (valid && reserved?.granted) await reserved.release()
  return valid
}

/** POST disable `{ password }`, `{ code }` or `{ recoveryCode }` → `{ success: true }`: `save(userId, null)`. */
export const disableTwoFactor = guarded(TWO_FACTOR_ROUTES.disable, async (ctx: AuthContext, event, body, claims) => {
  const state = await enrolledState(ctx, event, claims)
  let method: 'password' | 'code' | 'recovery_code'
  if (body.password !== undefined) {
    if (!(await checkAccountPassword(ctx, event, claims, body.password))) {
      await securityEvent(ctx, event, { type: 'two_factor.disabled', outcome: 'failure', caller: claims, details: { reason: 'wrong_password' } })
      await emitHook(ctx, 'svc:twoFactor:failed', { userId: claims.sub, stage: 'disable', reason: 'wrong_password', event })
      throw authError('current_password_incorrect')
    }
    method = 'password'
  }
  else {
    const result = await checkSecondFactor(ctx, event, claims.sub, state, body.code !== undefined ? { code: body.code } : { recoveryCode: body.recoveryCode! }, 'disable')
    if (!result.ok) throw authError('two_factor_invalid_code')
    method = result.method
  }
  await saveTwoFactorState(claims.sub, null, event, 'disabled')
  await endOtherSessions(ctx, event, claims)
  await securityEvent(ctx, event, { type: 'two_factor.disabled', caller: claims, details: { method } })
  await emitHook(ctx, 'svc:twoFactor:disabled', { userId: claims.sub, method, event })
  return { success: true as const }
}, recentOwner('two_factor_disable'))
