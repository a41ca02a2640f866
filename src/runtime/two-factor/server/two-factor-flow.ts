/**
 * The second-factor page's endpoints: verify a code of a pending login, or enrol during it. Each is bound
 * to the first factor's browser and counts attempts; completion takes the pending login atomically.
 */
import type { H3Event } from 'h3'
import type { TwoFactorFailureReason, TwoFactorMethod, TwoFactorState } from '../../types/auth'
import { matchesCodeBinding } from '../../server/lib/core/code-binding'
import type { AuthContext } from '../../server/lib/core/context'
import { authError, message } from '../../server/lib/edge/errors'
import { callbackLocation, loginSucceeded } from '../../server/lib/core/login'
import { createAuthCode } from '../../server/lib/core/records/auth-code'
import { countLoginAttempt, pendingLoginTokens, readPendingEnrolment, readPendingLogin, savePendingEnrolment, takePendingEnrolment, takePendingLogin, type EnrolmentOwner, type PendingLoginRecord } from './two-factor-records'
import { checkSecondFactor, claimTotpCode, type SecondFactorInput } from './code-check'
import { issuerOf } from './two-factor-options'
import { hashRecoveryCode, newRecoveryCodes, newTotpSecret, secretBox, totpUri } from './secret'
import { findTwoFactorState, newState, saveTwoFactorState } from './two-factor-state'
import { guarded } from '../../server/lib/edge/route-contract'
import { TWO_FACTOR_ROUTES } from './two-factor-routes'
import { emitHook } from '../../server/lib/core/handlers'
import { securityEvent } from '../../server/lib/edge/security-event'

/** The pending login of `flow`, from its own browser; from another it is burnt. */
async function pendingLoginOf(ctx: AuthContext, event: H3Event, flow: string): Promise<PendingLoginRecord> {
  const pending = await readPendingLogin(ctx, flow)
  if (!pending) throw authError('two_factor_login_expired')
  if (!matchesCodeBinding(event, ctx, pending.binding)) {
    await takePendingLogin(ctx, flow)
    await loginRefused(ctx, event, pending, 'binding_mismatch')
    await emitHook(ctx, 'svc:twoFactor:failed', { userId: pending.userId, stage: 'login', reason: 'binding_mismatch', event })
    throw authError('code_binding_mismatch', message('login_other_browser'))
  }
  return pending
}

/**
 * Counts an attempt: past `maxAttempts` 400 `too_many_attempts`, without removing the pending login
 * (a concurrent right code within the limit must still complete); a wrong last attempt removes it.
 */
async function countAttempt(ctx: AuthContext, event: H3Event, pending: PendingLoginRecord): Promise<number> {
  const attempts = await countLoginAttempt(ctx, pending.id, ctx.options.twoFactor.pendingLoginTTL)
  if (attempts > ctx.options.twoFactor.maxAttempts) await tooManyAttempts(ctx, event, pending)
  return attempts
}

async function tooManyAttempts(ctx: AuthContext, event: H3Event, pending: PendingLoginRecord): Promise<never> {
  await emitHook(ctx, 'svc:twoFactor:failed', { userId: pending.userId, stage: 'login', reason: 'too_many_attempts', event })
  throw authError('too_many_attempts', message('too_many_wrong_codes'))
}

/** A second factor refused at login: a `login` failure of the account (its first factor was proved). */
function loginRefused(ctx: AuthContext, event: H3Event, pending: PendingLoginRecord, reason: TwoFactorFailureReason): Promise<void> {
  return securityEvent(ctx, event, { type: 'login', outcome: 'failure', actor: null, subject: pending.userId, details: { provider: pending.provider, reason, stage: 'second_factor' } })
}

/** A wrong code: 400 `two_factor_invalid_code`, or on the last attempt the pending login is removed. */
async function wrongCode(ctx: AuthContext, event: H3Event, pending: PendingLoginRecord, attempts: number, reason: TwoFactorFailureReason): Promise<never> {
  await loginRefused(ctx, event, pending, reason)
  if (attempts < ctx.options.twoFactor.maxAttempts) throw authError('two_factor_invalid_code')
  await takePendingLogin(ctx, pending.id)
  await securityEvent(ctx, event, { type: 'lockout', outcome: 'failure', actor: null, subject: pending.userId, details: { reason: 'too_many_attempts', stage: 'login' } })
  return tooManyAttempts(ctx, event, pending)
}

/** Takes the pending login (one winner) and issues the authorization code: `svc:success` first. */
async function completeSecondFactor(ctx: AuthContext, event: H3Event, flow: string, method: TwoFactorMethod): Promise<string> {
  const login = await takePendingLogin(ctx, flow)
  if (!login) throw authError('two_factor_login_expired')
  // Reported with the login (its `secondFactor`) when the code is exchanged and the session starts.
  await emitHook(ctx, 'svc:twoFactor:verified', { userId: login.userId, provider: login.provider, method, event })
  await loginSucceeded(ctx, { user: login.user, tokens: pendingLoginTokens(ctx, login), provider: login.provider, event })
  const code = await createAuthCode(ctx, event, { user: login.user, claims: login.claims, provider: login.provider, redirect: login.redirect, secondFactor: method, upstream: login.upstream })
  return callbackLocation(ctx, code)
}

/** POST verify `{ flow, code }` or `{ flow, recoveryCode }` → `{ success: true, redirect }`. */
export const verifyLogin = guarded(TWO_FACTOR_ROUTES.verify, async (ctx: AuthContext, event, body) => {
  const pending = await pendingLoginOf(ctx, event, body.flow)
  if (pending.enrol) throw authError('two_factor_not_enabled', message('two_factor_setup_first'))
  const attempts = await countAttempt(ctx, event, pending)
  const state = await findTwoFactorState(ctx, pending.userId, event)
  if (!state) throw authError('two_factor_not_enabled')
  const input: SecondFactorInput = body.code !== undefined ? { code: body.code } : { recoveryCode: body.recoveryCode! }
  const result = await checkSecondFactor(ctx, event, pending.userId, state, input, 'login')
  if (!result.ok) return wrongCode(ctx, event, pending, attempts, result.reason)
  return { success: true as const, redirect: await completeSecondFactor(ctx, event, body.flow, result.method) }
})

/** What is left of a pending login's lifetime, in seconds (at least 1). */
const secondsLeft = (ctx: AuthContext, pending: PendingLoginRecord) =>
  Math.max(1, Math.ceil((pending.createdAt + ctx.options.twoFactor.pendingLoginTTL * 1000 - Date.now()) / 1000))

/** A new secret kept as the owner's pending enrolment for `ttl` seconds → `{ uri, secret }` (shown once). */
export async function newEnrolment(ctx: AuthContext, owner: EnrolmentOwner, userId: string, email: unknown, ttl: number): Promise<{ uri: string, secret: string }> {
  const { algorithm, digits, period } = ctx.options.twoFactor
  const secret = newTotpSecret(algorithm)
  await savePendingEnrolment(ctx, owner, { userId, secret: secretBox(ctx).seal(userId, secret) }, ttl)
  const account = typeof email === 'string' && email ? email : userId
  return { uri: totpUri(secret, { algorithm, digits, period }, issuerOf(ctx.options), account), secret }
}

/** POST login-enrol `{ flow }` → `{ uri, secret }`: a new secret for a login that must enrol. */
export const startLoginEnrolment = guarded(TWO_FACTOR_ROUTES.loginEnrol, async (ctx: AuthContext, event, body) => {
  const pending = await pendingLoginOf(ctx, event, body.flow)
  if (!pending.enrol) throw authError('two_factor_already_enabled')
  return newEnrolment(ctx, { flow: pending.id }, pending.userId, pending.user.email, secondsLeft(ctx, pending))
})

/** Confirms an enrolment with its first code; an existing enrolment is never replaced. */
export async function confirmEnrolmentCode(ctx: AuthContext, event: H3Event, owner: EnrolmentOwner, userId: string, code: string): Promise<{ state: TwoFactorState, recoveryCodes: string[] } | 'invalid_code' | 'expired'> {
  const enrolment = await readPendingEnrolment(ctx, owner)
  const opened = enrolment && enrolment.userId === userId ? secretBox(ctx).open(userId, enrolment.secret) : null
  if (!enrolment || !opened) return 'expired'
  const { algorithm, digits, period, recoveryCodes: count } = ctx.options.twoFactor
  const params = { algorithm, digits, period }
  if (await claimTotpCode(ctx, userId, opened.secret, params, code) !== 'ok') return 'invalid_code'
  if (!(await takePendingEnrolment(ctx, owner))) return 'expired'
  if (await findTwoFactorState(ctx, userId, event)) throw authError('two_factor_already_enabled')
  const recoveryCodes = newRecoveryCodes(count)
  const state = newState(secretBox(ctx).seal(userId, opened.secret), recoveryCodes.map(c => hashRecoveryCode(ctx, userId, c)), params)
  await saveTwoFactorState(userId, state, event, 'enrolled')
  return { state, recoveryCodes }
}

/** POST login-confirm `{ flow, code }` → `{ success: true, redirect, recoveryCodes }`. */
export const confirmLoginEnrolment = guarded(TWO_FACTOR_ROUTES.loginConfirm, async (ctx: AuthContext, event, body) => {
  const pending = await pendingLoginOf(ctx, event, body.flow)
  if (!pending.enrol) throw authError('two_factor_enrolment_expired')
  const attempts = await countAttempt(ctx, event, pending)
  const confirmed = await confirmEnrolmentCode(ctx, event, { flow: pending.id }, pending.userId, body.code)
  if (confirmed === 'expired') throw authError('two_factor_enrolment_expired')
  if (confirmed === 'invalid_code') return wrongCode(ctx, event, pending, attempts, 'invalid_code')
  await securityEvent(ctx, event, { type: 'two_factor.enrolled', actor: pending.userId, details: { during: 'login' } })
  await emitHook(ctx, 'svc:twoFactor:enrolled', { userId: pending.userId, during: 'login', event })
  return { success: true as const, redirect: await completeSecondFactor(ctx, event, body.flow, 'code'), recoveryCodes: confirmed.recoveryCodes }
})
