/** Register and login with a password, each confirmed by an emailed code (reset and change: new-password.ts). */
import type { H3Event } from 'h3'
import type { AuthUser, ProviderClaims, ProviderTokens } from '../../types/auth'
import type { AuthContext } from '../../server/lib/core/context'
import { authError, authErrorCode } from '../../server/lib/edge/errors'
import { localizedEmail, requestLocale } from '../../server/lib/core/locale-of'
import { completeLogin } from '../../server/lib/core/login'
import { trustedDevice } from '../../server/lib/edge/device-cookie'
import { reserveLoginFailure } from '../../server/lib/edge/rate-limit'
import { hitRateLimit } from '../../server/lib/edge/rate-counter'
import { afterAnswer, answerRedirect, issueCode, verifyCode } from './email-codes'
import { checkPassword, limitedEmail, requirePolicy } from './password-check'
import { requireEmail } from '../../server/lib/edge/email'
import { passwordHandlers, passwordSubject, requirePersistence, type ResolvedPasswordHandlers } from './password-handlers'
import { usePasswordRuntime, type PasswordRuntime } from './password-runtime'
import { guarded } from '../../server/lib/edge/route-contract'
import { securityEvent } from '../../server/lib/edge/security-event'
import { PASSWORD_ROUTES } from './password-routes'

const NO_TOKENS: ProviderTokens = { access_token: '' }

/** Static `customClaims` of the options, then the host's callback over them. */
function providerClaims(runtime: PasswordRuntime, handlers: ResolvedPasswordHandlers): ProviderClaims | undefined {
  const fixed = runtime.options.customClaims
  const callback = handlers.customClaims
  if (!callback) return fixed
  return async (user, tokens) => ({ ...fixed, ...(await callback(user, tokens)) })
}

/** Ends a verified register or login in the shared pipeline and redirects to the callback page. */
async function finishLogin(ctx: AuthContext, event: H3Event, runtime: PasswordRuntime, handlers: ResolvedPasswordHandlers, user: AuthUser & { email: string, hashedPassword: string }) {
  requirePersistence()
  const { location } = await completeLogin(ctx, {
    event,
    provider: 'password',
    // The emailed code proved the address.
    user: { ...user, emailVerified: true },
    tokens: NO_TOKENS,
    keepSubject: true,
    handlers: { customClaims: providerClaims(runtime, handlers) },
  })
  return answerRedirect(event, location)
}

/** At most one `account_exists` notice per address in this many seconds: registering cannot flood an owner's inbox. */
export const ACCOUNT_EXISTS_NOTICE_WINDOW = 3600

/** Tells an account's owner that someone tried to register with their address; the message carries no code. */
async function noticeExistingAccount(ctx: AuthContext, event: H3Event, handlers: ResolvedPasswordHandlers, email: string): Promise<void> {
  if (!(await hitRateLimit(ctx, `register-notice:${email}`, 1, ACCOUNT_EXISTS_NOTICE_WINDOW)).allowed) return
  const localized = await localizedEmail(ctx, event, 'account_exists', {})
  await handlers.sendVerificationCode(email, '', 'account_exists', { link: '', flow: '', expiresAt: new Date(), ...localized })
}

/** POST register: `{ email, password }` → `{ success: true }` and a code by email. */
export const register = guarded(PASSWORD_ROUTES.register, async (ctx: AuthContext, event, body) => {
  const email = await limitedEmail(ctx, event, 'register', body.email)
  const runtime = usePasswordRuntime(ctx)
  const handlers = passwordHandlers()
  const password = await requirePolicy(runtime, handlers, body.password)
  if (!runtime.options.revealExistingAccounts) {
    // Every address costs the same hash and gets the same answer; whether it has an account is looked up after the answer.
    const hashedPassword = await runtime.hasher.hash(password)
    // The locale first, for every address alike: the email after the answer is in it.
    await requestLocale(ctx, event)
    afterAnswer(event, async () => {
      if (await handlers.findUser(email)) await noticeExistingAccount(ctx, event, handlers, email)
      else await issueCode(ctx, event, runtime, handlers, { email, action: 'register', data: { hashedPassword } })
    }, (error) => {
      // A failed delivery of the code was logged by issueCode.
      if (authErrorCode(error) !== 'send_failed') ctx.logger.error('Handling a registration failed', error)
    })
    return { success: true as const }
  }
  if (await handlers.findUser(email)) throw authError('user_exists')
  const hashedPassword = await runtime.hasher.hash(password)
  await issueCode(ctx, event, runtime, handlers, { email, action: 'register', data: { hashedPassword } })
  return { success: true as const }
})

/** GET/POST register-verify: creates the account through onUserPersist and logs it in. */
export const registerVerify = guarded(PASSWORD_ROUTES.registerVerify, async (ctx: AuthContext, event, input) => {
  const runtime = usePasswordRuntime(ctx)
  const handlers = passwordHandlers()
  const record = await verifyCode<{ hashedPassword?: unknown }>(ctx, event, runtime.options, 'register', input)
  const hashedPassword = record.data.hashedPassword
  if (typeof hashedPassword !== 'string') throw authError('invalid_verification_code')
  // Someone may have created the account since the code was sent: never overwrite it (nor name it, when accounts are not revealed).
  if (await handlers.findUser(record.email)) throw authError(runtime.options.revealExistingAccounts ? 'user_exists' : 'invalid_verification_code')
  const email = record.email
  return finishLogin(ctx, event, runtime, handlers, { email, hashedPassword, sub: passwordSubject({}, email) })
})

/** POST login: `{ email, password }` → `{ success: true }` and a code by email. */
export const login = guarded(PASSWORD_ROUTES.login, async (ctx: AuthContext, event, body) => {
  const runtime = usePasswordRuntime(ctx)
  const handlers = passwordHandlers()
  const email = requireEmail(body.email)
  const failure = await reserveLoginFailure(ctx, event, email, trustedDevice(event, ctx, email))
  let user: Awaited<ReturnType<typeof handlers.findUser>>
  let valid: boolean
  try {
    user = await handlers.findUser(email)
    // An unknown email, a wrong password and one too long cost the same work and get the same answer.
    valid = await checkPassword(runtime, handlers, body.password, user?.hashedPassword ?? null)
  }
  catch (error) {
    // A failing lookup (the host's database) is not the user's failed login.
    await failure.release()
    throw error
  }
  if (!valid) {
    // Recorded only: the answer is the same for both.
    const subject = user ? passwordSubject(user, email) : null
    await securityEvent(ctx, event, { type: 'login', outcome: 'failure', actor: null, subject, details: { provider: 'password', reason: user ? 'wrong_password' : 'unknown_account' } })
    throw authError('invalid_credentials')
  }
  await failure.release()
  await issueCode(ctx, event, runtime, handlers, { email, action: 'login' })
  return { success: true as const }
})

/** GET/POST login-verify: fresh user data, claims, authorization code, redirect. */
export const loginVerify = guarded(PASSWORD_ROUTES.loginVerify, async (ctx: AuthContext, event, input) => {
  const runtime = usePasswordRuntime(ctx)
  const handlers = passwordHandlers()
  const record = await verifyCode(ctx, event, runtime.options, 'login', input)
  const user = await handlers.findUser(record.email)
  // The password may have been removed since the code was sent.
  if (typeof user?.hashedPassword !== 'string') throw authError('invalid_verification_code')
  const email = record.email
  return finishLogin(ctx, event, runtime, handlers, { ...user, email, hashedPassword: user.hashedPassword, sub: passwordSubject(user, email) })
})
