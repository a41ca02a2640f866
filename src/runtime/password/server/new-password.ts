/** Flows that set a new password: reset and change; both end the other sessions before storing the hash. */
import type { H3Event } from 'h3'
import type { AuthClaims } from '../../types/auth'
import type { AuthContext } from '../../server/lib/core/context'
import { requireCaller } from '../../server/lib/core/authenticate'
import { browserBindingOf, matchesCodeBinding } from '../../server/lib/core/code-binding'
import { authError, authErrorCode, message, renderText } from '../../server/lib/edge/errors'
import { requestLocale } from '../../server/lib/core/locale-of'
import { enforceRateLimit } from '../../server/lib/edge/rate-limit'
import { consumeResetSession, createResetSession, readResetSession } from '../../server/lib/core/records/reset-session'
import { revokeSessions } from '../../server/lib/core/session-list'
import { hostSubjectOf, type SubjectSource } from '../../server/lib/core/subject'
import { afterAnswer, answerRedirect, issueCode, verifyCode } from './email-codes'
import { checkPassword, limitedEmail, requirePolicy } from './password-check'
import { requireEmail } from '../../server/lib/edge/email'
import { passwordHandlers, passwordSubject, persistPasswordUser } from './password-handlers'
import { usePasswordRuntime } from './password-runtime'
import { guarded } from '../../server/lib/edge/route-contract'
import { securityEvent } from '../../server/lib/edge/security-event'
import { PASSWORD_ROUTES } from './password-routes'

/** POST reset-request: always the same answer; the lookup, the code and its delivery happen after it. */
export const resetRequest = guarded(PASSWORD_ROUTES.resetRequest, async (ctx: AuthContext, event, body) => {
  const email = await limitedEmail(ctx, event, 'resetRequest', body.email)
  const runtime = usePasswordRuntime(ctx)
  const handlers = passwordHandlers()
  // The locale first, for every request alike: the code's email is in it too.
  const answer = renderText(message('reset_requested'), (await requestLocale(ctx, event)).lookup)
  afterAnswer(event, async () => {
    const user = await handlers.findUser(email)
    await securityEvent(ctx, event, { type: 'password.reset_requested', actor: null, subject: user ? passwordSubject(user, email) : null })
    if (user) await issueCode(ctx, event, runtime, handlers, { email, action: 'reset' })
  }, (error) => {
    if (authErrorCode(error) !== 'send_failed') ctx.logger.error('Handling a reset request failed', error)
  })
  return { success: true as const, message: answer }
})

/** GET/POST reset-verify: a 5-minute single-use reset session, redirect to the reset page. */
export const resetVerify = guarded(PASSWORD_ROUTES.resetVerify, async (ctx: AuthContext, event, input) => {
  const runtime = usePasswordRuntime(ctx)
  const record = await verifyCode(ctx, event, runtime.options, 'reset', input)
  // Bound to this browser like a code: a leaked reset link cannot set the password elsewhere.
  const sessionId = await createResetSession(ctx, { email: record.email, binding: browserBindingOf(event, ctx) })
  const location = `${runtime.options.resetPasswordPath}?session=${encodeURIComponent(sessionId)}`
  return answerRedirect(event, location, { sessionId })
})

/** Revokes every session of the user's subjects (all but `except`). */
async function revokeSubjectSessions(ctx: AuthContext, event: H3Event, subjects: Iterable<string>, reason: 'password_reset' | 'password_change', except?: { subject: string, sid?: string }): Promise<number> {
  let revoked = 0
  for (const subject of new Set(subjects)) {
    revoked += await revokeSessions(ctx, subject, reason, { event, ...(except && except.subject === subject && except.sid ? { except: except.sid } : {}) })
  }
  return revoked
}

/** The subject `onUserPersist` named beyond the account's own (an id the handler returned), if any. */
function newSubjects(user: SubjectSource, email: string, persisted: SubjectSource | undefined): string[] {
  const assigned = hostSubjectOf(persisted)
  return assigned && assigned !== passwordSubject(user, email) ? [assigned] : []
}

/** POST reset-complete: `{ sessionId, newPassword }`; persists the hash, revokes every session. */
export const resetComplete = guarded(PASSWORD_ROUTES.resetComplete, async (ctx: AuthContext, event, body) => {
  const runtime = usePasswordRuntime(ctx)
  const handlers = passwordHandlers()
  const invalid = () => authError('invalid_reset_session')
  // Read without consuming, so a password the policy refuses can be corrected.
  const pending = await readResetSession(ctx, body.sessionId)
  if (!pending) throw invalid()
  if (pending.binding !== undefined && !matchesCodeBinding(event, ctx, pending.binding)) {
    await consumeResetSession(ctx, body.sessionId)
    await securityEvent(ctx, event, { type: 'password.reset', outcome: 'failure', actor: null, details: { reason: 'other_browser' } })
    throw invalid()
  }
  const newPassword = await requirePolicy(runtime, handlers, body.newPassword)
  const hashedPassword = await runtime.hasher.hash(newPassword)
  const session = await consumeResetSession(ctx, body.sessionId)
  if (!session) throw invalid()
  const user = await handlers.findUser(session.email)
  if (!user) throw invalid()
  // Sessions are revoked before the new password is stored: a failure in between leaves no thief's session alive.
  const subject = passwordSubject(user, session.email)
  let revoked = await revokeSubjectSessions(ctx, event, [subject], 'password_reset')
  const persisted = await persistPasswordUser(event, { ...user, email: session.email, hashedPassword })
  revoked += await revokeSubjectSessions(ctx, event, newSubjects(user, session.email, persisted), 'password_reset')
  await securityEvent(ctx, event, { type: 'password.reset', actor: subject, details: { revokedSessions: revoked } })
  return { success: true as const }
})

/** The caller of a password change: 401 without a valid bearer token, 403 for an impersonated session. */
function passwordOwner(ctx: AuthContext, event: H3Event): Promise<AuthClaims> {
  return requireCaller(event, ctx, true)
}

/** POST change (bearer): `{ currentPassword, newPassword }`; keeps the current session only. */
export const change = guarded(PASSWORD_ROUTES.change, async (ctx: AuthContext, event, body, claims) => {
  const runtime = usePasswordRuntime(ctx)
  const handlers = passwordHandlers()
  const email = typeof claims.email === 'string' ? requireEmail(claims.email) : undefined
  if (!email) throw authError('no_password_account')
  await enforceRateLimit(ctx, event, 'change', { ip: false, email })
  const newPassword = await requirePolicy(runtime, handlers, body.newPassword)
  const user = await handlers.findUser(email)
  // An account without a password (magic links only) has none to change: reset-request sets one.
  if (typeof user?.hashedPassword !== 'string') throw authError('no_password_account')
  if (!(await checkPassword(runtime, handlers, body.currentPassword, user.hashedPassword))) {
    await securityEvent(ctx, event, { type: 'password.changed', outcome: 'failure', caller: claims, details: { reason: 'wrong_password' } })
    throw authError('current_password_incorrect')
  }
  const hashedPassword = await runtime.hasher.hash(newPassword)
  // The other sessions end before the new password is stored (see resetComplete).
  const keep = { subject: claims.sub, sid: claims.sid }
  let revoked = await revokeSubjectSessions(ctx, event, [claims.sub, passwordSubject(user, email)], 'password_change', keep)
  const persisted = await persistPasswordUser(event, { ...user, email, hashedPassword })
  revoked += await revokeSubjectSessions(ctx, event, newSubjects(user, email, persisted), 'password_change', keep)
  await securityEvent(ctx, event, { type: 'password.changed', caller: claims, details: { revokedSessions: revoked } })
  return { success: true as const }
}, passwordOwner)
