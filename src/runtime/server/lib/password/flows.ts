import type { H3Event } from 'h3'
import { getQuery, getRequestHeader, sendRedirect } from 'h3'
import { z } from 'zod'
import type { AuthClaims, AuthUser, MagicCodeAction, ProviderTokens } from '../../../types/auth'
import type { AuthContext } from '../context'
import { authenticationError } from '../authenticate'
import { authError, authErrorCode } from '../errors'
import { completeLogin, type ProviderClaims } from '../login'
import { enforceRateLimit, reserveLoginFailure, retryAfterOf, tooMany } from '../rate-limit'
import { createMagicCode, discardMagicCode, verifyMagicCode, type MagicCodeRecord } from '../records/magic-code'
import { revokeSessions } from '../sessions'
import { consumeResetSession, createResetSession, readResetSession } from '../records/reset-session'
import { browserBindingOf, matchesCodeBinding } from '../code-binding'
import { refuseCrossOrigin } from '../request-guards'
import { describeIssues, readBodyWith } from '../validation'
import { MAX_EMAIL_LENGTH, requireEmail } from './email'
import { passwordHandlers, passwordSubject, persistPasswordUser, persistWithProviderHandler, type ResolvedPasswordHandlers } from './handlers'
import { checkPasswordPolicy, MAX_PASSWORD_BYTES, normalizePassword, passwordBytes, passwordForms, policyMessage, TOO_LONG } from './policy'
import { verifyLink } from './paths'
import { usePasswordRuntime, type PasswordRuntime } from './runtime'

/** Longest password accepted in a body (bcrypt checks 72 bytes; this bounds the work of others). */
const MAX_PASSWORD_LENGTH = 1024

const emailField = z.string().max(MAX_EMAIL_LENGTH + 64)
const passwordField = z.string().max(MAX_PASSWORD_LENGTH)

const credentialsBody = z.object({ email: emailField, password: passwordField })
const resetRequestBody = z.object({ email: emailField })
const resetCompleteBody = z.object({ sessionId: z.string().min(1).max(512), newPassword: passwordField })
const changeBody = z.object({ currentPassword: passwordField, newPassword: passwordField })
/** Body of POST verify (JSON or form) and query of GET verify. */
const verifyInput = z.object({ code: z.string().max(64), email: emailField.optional(), flow: z.string().max(64).optional() })

const CODE_PATTERN = /^\d{6}$/
const NO_TOKENS: ProviderTokens = { access_token: '' }

/** Longest password (UTF-8 bytes) the hash checks whole: bcrypt's 72, none for the host's own hash. */
function byteLimit(handlers: ResolvedPasswordHandlers): number {
  return handlers.customHash ? Number.POSITIVE_INFINITY : MAX_PASSWORD_BYTES
}

/**
 * The built-in policy, or the host's `validatePassword` instead of it; either way a password that
 * bcrypt would cut is refused.
 */
async function passwordViolations(runtime: PasswordRuntime, handlers: ResolvedPasswordHandlers, password: string): Promise<string[]> {
  let violations: string[]
  if (!handlers.validatePassword) violations = checkPasswordPolicy(password, runtime.options.passwordPolicy)
  else {
    const verdict = await handlers.validatePassword(password)
    violations = Array.isArray(verdict) ? verdict.map(String) : verdict === true ? [] : ['a password the application accepts']
  }
  if (passwordBytes(password) > byteLimit(handlers) && !violations.includes(TOO_LONG)) violations.push(TOO_LONG)
  return violations
}

/** Checks a new password (register, reset, change) and returns it in normal form. */
async function requirePolicy(runtime: PasswordRuntime, handlers: ResolvedPasswordHandlers, typed: string): Promise<string> {
  const password = normalizePassword(typed)
  const violations = await passwordViolations(runtime, handlers, password)
  if (violations.length) throw authError(400, 'password_policy', policyMessage(violations))
  return password
}

/**
 * Checks a typed password against a stored hash (null: unknown account). Tried in normal form,
 * then as typed (older hashes); a password longer than register accepts is never checked but
 * costs the same work, so every refusal looks and takes the same.
 */
function checkPassword(runtime: PasswordRuntime, handlers: ResolvedPasswordHandlers, typed: string, hash: string | null): Promise<boolean> {
  const forms = passwordForms(typed)
  const limit = byteLimit(handlers)
  const candidates = passwordBytes(forms[0]!) > limit ? [] : forms.filter(form => passwordBytes(form) <= limit)
  return runtime.hasher.verifyFirst(candidates, hash, forms.length)
}

/**
 * Stores a new code (replacing a pending one of the same email and action) and delivers it. A
 * failed delivery leaves no usable code and answers 500 `send_failed`.
 */
async function issueCode(ctx: AuthContext, runtime: PasswordRuntime, handlers: ResolvedPasswordHandlers, input: { email: string, action: MagicCodeAction, data?: Record<string, unknown> }): Promise<void> {
  const ttlSeconds = runtime.options.magicCodeTTL
  const { code, flow } = await createMagicCode(ctx, { email: input.email, action: input.action, data: input.data ?? {}, ttlSeconds })
  const link = verifyLink(ctx.options.publicUrl ?? '', ctx.options.endpoints.authPath, input.action, code, flow)
  try {
    await handlers.sendVerificationCode(input.email, code, input.action, { link, flow, expiresAt: new Date(Date.now() + ttlSeconds * 1000) })
  }
  catch (error) {
    await discardMagicCode(ctx, input.action, input.email, { code })
    ctx.logger.error(`Sending the ${input.action} code failed`, error)
    throw authError(500, 'send_failed', 'Failed to send code')
  }
}

/** Resolves once the current request's answer has been handed to the socket (the next macrotask). */
const afterAnswer = () => new Promise<void>(resolve => setImmediate(resolve))

/** Reads `{ code, email?, flow? }` from the query (GET) or the JSON or form body (POST). */
async function readVerifyInput(event: H3Event): Promise<{ code: string, email?: string, flow?: string }> {
  let input: z.output<typeof verifyInput>
  if (event.method === 'GET') {
    const parsed = verifyInput.safeParse(getQuery(event))
    if (!parsed.success) throw authError(400, 'bad_request', describeIssues(parsed.error))
    input = parsed.data
  }
  else {
    input = await readBodyWith(event, verifyInput)
  }
  const flow = input.flow?.trim() || undefined
  return { code: input.code.trim(), email: input.email === undefined || input.email.trim() === '' ? undefined : requireEmail(input.email), flow }
}

/** Verifies a code of `action`; 400 `invalid_verification_code` or `too_many_attempts`. */
async function verifyCode<TData>(ctx: AuthContext, event: H3Event, runtime: PasswordRuntime, action: MagicCodeAction): Promise<MagicCodeRecord<TData>> {
  await enforceRateLimit(ctx, event, 'verify')
  const { code, email, flow } = await readVerifyInput(event)
  const invalid = () => authError(400, 'invalid_verification_code', 'Invalid or expired code')
  if (!CODE_PATTERN.test(code)) throw invalid()
  const limits = ctx.options.rateLimit
  const on = limits?.enabled === true
  const codeOnlyBudget = on ? { max: limits.codeOnlyVerify.misses, windowSeconds: limits.codeOnlyVerify.window } : undefined
  const emailFailureBudget = on && limits.verifyFailures.perEmail > 0 ? { max: limits.verifyFailures.perEmail, windowSeconds: limits.verifyFailures.window } : undefined
  const result = await verifyMagicCode<TData>(ctx, { action, code, email, flow, maxAttempts: runtime.options.magicCodeMaxAttempts, ttlSeconds: runtime.options.magicCodeTTL, codeOnlyBudget, emailFailureBudget })
  if (result.status === 'budget_exhausted') {
    ctx.logger.security('verification_budget_exhausted', { action })
    throw tooMany(await retryAfterOf(ctx, result.budgetKey, 1))
  }
  if (result.status === 'too_many_attempts') {
    ctx.logger.security('verification_attempts_exceeded', { action })
    throw authError(400, 'too_many_attempts', 'Maximum attempts exceeded')
  }
  if (result.status !== 'ok') throw invalid()
  return result.record
}

/** True when a POST asks for JSON (fetch clients) rather than a page (HTML forms). */
function wantsJson(event: H3Event): boolean {
  if (event.method !== 'POST') return false
  const accept = getRequestHeader(event, 'accept') ?? ''
  return accept.includes('application/json') && !accept.includes('text/html')
}

/** 302 to `location`; a POST that accepts JSON gets `{ success: true, redirect, ...extra }` instead. */
async function answerRedirect(event: H3Event, location: string, extra: Record<string, unknown> = {}): Promise<Record<string, unknown> | undefined> {
  if (wantsJson(event)) return { success: true, redirect: location, ...extra }
  await sendRedirect(event, location, 302)
  return undefined
}

/** Static `customClaims` of the options, then the host's callback over them. */
function providerClaims(runtime: PasswordRuntime, handlers: ResolvedPasswordHandlers): ProviderClaims | undefined {
  const fixed = runtime.options.customClaims
  const callback = handlers.customClaims
  if (!callback) return fixed
  return async (user, tokens) => ({ ...fixed, ...(await callback(user, tokens)) })
}

/** Ends a verified register or login in the shared pipeline and redirects to the callback page. */
async function finishLogin(ctx: AuthContext, event: H3Event, runtime: PasswordRuntime, handlers: ResolvedPasswordHandlers, user: AuthUser & { email: string, hashedPassword: string }) {
  const prepared = await persistWithProviderHandler(user)
  const { code } = await completeLogin(ctx, {
    event,
    provider: 'password',
    user: prepared,
    tokens: NO_TOKENS,
    keepSubject: true,
    handlers: { customClaims: providerClaims(runtime, handlers) },
  })
  const location = `${ctx.options.endpoints.callbackPath}?code=${encodeURIComponent(code)}`
  return answerRedirect(event, location)
}

/** POST register: `{ email, password }` → `{ success: true }` and a code by email. */
export async function register(ctx: AuthContext, event: H3Event) {
  refuseCrossOrigin(event, ctx)
  const runtime = usePasswordRuntime(ctx)
  const handlers = passwordHandlers()
  await enforceRateLimit(ctx, event, 'register', { ip: true })
  const body = await readBodyWith(event, credentialsBody)
  const email = requireEmail(body.email)
  await enforceRateLimit(ctx, event, 'register', { ip: false, email })
  const password = await requirePolicy(runtime, handlers, body.password)
  if (await handlers.findUser(email)) throw authError(400, 'user_exists', 'User already exists')
  const hashedPassword = await runtime.hasher.hash(password)
  await issueCode(ctx, runtime, handlers, { email, action: 'register', data: { hashedPassword } })
  return { success: true as const }
}

/** GET/POST register-verify: creates the account through onUserPersist and logs it in. */
export async function registerVerify(ctx: AuthContext, event: H3Event) {
  if (event.method === 'POST') refuseCrossOrigin(event, ctx)
  const runtime = usePasswordRuntime(ctx)
  const handlers = passwordHandlers()
  const record = await verifyCode<{ hashedPassword?: unknown }>(ctx, event, runtime, 'register')
  const hashedPassword = record.data.hashedPassword
  if (typeof hashedPassword !== 'string') throw authError(400, 'invalid_verification_code', 'Invalid or expired code')
  // Someone may have created the account since the code was sent: never overwrite it.
  if (await handlers.findUser(record.email)) throw authError(400, 'user_exists', 'User already exists')
  const email = record.email
  return finishLogin(ctx, event, runtime, handlers, { email, hashedPassword, sub: passwordSubject({}, email) })
}

/** POST login: `{ email, password }` → `{ success: true }` and a code by email. */
export async function login(ctx: AuthContext, event: H3Event) {
  refuseCrossOrigin(event, ctx)
  const runtime = usePasswordRuntime(ctx)
  const handlers = passwordHandlers()
  await enforceRateLimit(ctx, event, 'login', { ip: true })
  const body = await readBodyWith(event, credentialsBody)
  const email = requireEmail(body.email)
  const failure = await reserveLoginFailure(ctx, event, email)
  let valid: boolean
  try {
    const user = await handlers.findUser(email)
    // An unknown email, a wrong password and one too long to check all cost the same bcrypt work
    // and get the same answer.
    valid = await checkPassword(runtime, handlers, body.password, user?.hashedPassword ?? null)
  }
  catch (error) {
    // A failing lookup (the host's database) is not the user's failed login.
    await failure.release()
    throw error
  }
  if (!valid) {
    ctx.logger.security('password_login_failed', {})
    throw authError(400, 'invalid_credentials', 'Invalid email or password')
  }
  await failure.release()
  await issueCode(ctx, runtime, handlers, { email, action: 'login' })
  return { success: true as const }
}

/** GET/POST login-verify: fresh user data, claims, authorization code, redirect. */
export async function loginVerify(ctx: AuthContext, event: H3Event) {
  if (event.method === 'POST') refuseCrossOrigin(event, ctx)
  const runtime = usePasswordRuntime(ctx)
  const handlers = passwordHandlers()
  const record = await verifyCode(ctx, event, runtime, 'login')
  const user = await handlers.findUser(record.email)
  if (!user) throw authError(400, 'invalid_verification_code', 'Invalid or expired code')
  const email = record.email
  return finishLogin(ctx, event, runtime, handlers, { ...user, email, hashedPassword: user.hashedPassword, sub: passwordSubject(user, email) })
}

export const RESET_REQUEST_MESSAGE = 'If an account exists for this email, a code has been sent to it.'

/**
 * POST reset-request: always the same answer. Whether the account exists is only looked up; the
 * code is stored and delivered after the answer, so known and unknown emails take the same time.
 */
export async function resetRequest(ctx: AuthContext, event: H3Event) {
  refuseCrossOrigin(event, ctx)
  const runtime = usePasswordRuntime(ctx)
  const handlers = passwordHandlers()
  await enforceRateLimit(ctx, event, 'resetRequest', { ip: true })
  const body = await readBodyWith(event, resetRequestBody)
  const email = requireEmail(body.email)
  await enforceRateLimit(ctx, event, 'resetRequest', { ip: false, email })
  // Everything that depends on whether the account exists (the lookup, storing the code, its
  // delivery) starts only after the answer has been sent, so neither the answer nor its timing
  // tells. Failures are logged; the answer stays the same.
  const delivery = afterAnswer().then(async () => {
    if (await handlers.findUser(email)) await issueCode(ctx, runtime, handlers, { email, action: 'reset' })
  }).catch((error: unknown) => {
    // A failed delivery has been logged by issueCode.
    if (authErrorCode(error) !== 'send_failed') ctx.logger.error('Handling a reset request failed', error)
  })
  const waitUntil = (event as H3Event & { waitUntil?: (promise: Promise<unknown>) => void }).waitUntil
  if (typeof waitUntil === 'function') waitUntil.call(event, delivery)
  return { success: true as const, message: RESET_REQUEST_MESSAGE }
}

/** GET/POST reset-verify: a 5-minute single-use reset session, redirect to the reset page. */
export async function resetVerify(ctx: AuthContext, event: H3Event) {
  if (event.method === 'POST') refuseCrossOrigin(event, ctx)
  const runtime = usePasswordRuntime(ctx)
  const record = await verifyCode(ctx, event, runtime, 'reset')
  // The reset session is bound to this browser like an authorization code: a link to the reset
  // page that leaks (history, Referer, a shared screen) cannot set the password elsewhere.
  const sessionId = await createResetSession(ctx, { email: record.email, binding: browserBindingOf(event, ctx) })
  const location = `${runtime.options.resetPasswordPath}?session=${encodeURIComponent(sessionId)}`
  return answerRedirect(event, location, { sessionId })
}

/** Revokes every session of the user's subjects (all but `except`). */
async function revokeSubjectSessions(ctx: AuthContext, subjects: Iterable<string>, reason: 'password_reset' | 'password_change', except?: { subject: string, sid?: string }): Promise<number> {
  let revoked = 0
  for (const subject of new Set(subjects)) {
    revoked += await revokeSessions(ctx, subject, reason, except && except.subject === subject && except.sid ? { except: except.sid } : {})
  }
  return revoked
}

/** Subjects a password account's sessions may be indexed under. */
function subjectsOf(user: { sub?: unknown, id?: unknown }, email: string, persisted?: Record<string, unknown>): string[] {
  const subjects = [passwordSubject(user, email)]
  if (persisted) {
    const id = persisted.id ?? persisted.sub
    if ((typeof id === 'string' && id) || typeof id === 'number') subjects.push(String(id))
  }
  return subjects
}

/** Subjects that persisting revealed beyond those known before (an id the handler returned). */
function newSubjects(user: { sub?: unknown, id?: unknown }, email: string, persisted: Record<string, unknown> | undefined): string[] {
  const before = new Set(subjectsOf(user, email))
  return subjectsOf(user, email, persisted).filter(subject => !before.has(subject))
}

/** POST reset-complete: `{ sessionId, newPassword }`; persists the hash, revokes every session. */
export async function resetComplete(ctx: AuthContext, event: H3Event) {
  refuseCrossOrigin(event, ctx)
  const runtime = usePasswordRuntime(ctx)
  const handlers = passwordHandlers()
  await enforceRateLimit(ctx, event, 'resetComplete')
  const body = await readBodyWith(event, resetCompleteBody)
  const invalid = () => authError(400, 'invalid_reset_session', 'Invalid or expired reset session')
  // Checked without consuming, so that a password refused by the policy can be corrected; in
  // another browser it is burnt.
  const pending = await readResetSession(ctx, body.sessionId)
  if (!pending) throw invalid()
  if (pending.binding !== undefined && !matchesCodeBinding(event, ctx, pending.binding)) {
    await consumeResetSession(ctx, body.sessionId)
    ctx.logger.security('reset_session_binding_mismatch', {})
    throw invalid()
  }
  const newPassword = await requirePolicy(runtime, handlers, body.newPassword)
  const hashedPassword = await runtime.hasher.hash(newPassword)
  const session = await consumeResetSession(ctx, body.sessionId)
  if (!session) throw invalid()
  const user = await handlers.findUser(session.email)
  if (!user) throw invalid()
  // Sessions are revoked before the new password is stored: if anything fails in between, every
  // session has ended (safe), never a new password with a thief's session still alive.
  let revoked = await revokeSubjectSessions(ctx, subjectsOf(user, session.email), 'password_reset')
  const persisted = await persistPasswordUser(event, { ...user, email: session.email, hashedPassword })
  revoked += await revokeSubjectSessions(ctx, newSubjects(user, session.email, persisted), 'password_reset')
  ctx.logger.security('password_reset', { revokedSessions: revoked })
  return { success: true as const }
}

/** POST change (bearer): `{ currentPassword, newPassword }`; keeps the current session only. */
export async function change(ctx: AuthContext, event: H3Event, claims: AuthClaims | undefined) {
  refuseCrossOrigin(event, ctx)
  if (!claims) throw authenticationError(event)
  if (claims.impersonation) throw authError(403, 'impersonated_session', 'Impersonated sessions cannot change the password')
  const runtime = usePasswordRuntime(ctx)
  const handlers = passwordHandlers()
  await enforceRateLimit(ctx, event, 'change', { ip: true })
  const body = await readBodyWith(event, changeBody)
  const email = typeof claims.email === 'string' ? requireEmail(claims.email) : undefined
  if (!email) throw authError(400, 'no_password_account', 'This account has no password')
  await enforceRateLimit(ctx, event, 'change', { ip: false, email })
  const newPassword = await requirePolicy(runtime, handlers, body.newPassword)
  const user = await handlers.findUser(email)
  if (!user) throw authError(400, 'no_password_account', 'This account has no password')
  if (!(await checkPassword(runtime, handlers, body.currentPassword, user.hashedPassword))) {
    ctx.logger.security('password_change_refused', {})
    throw authError(400, 'current_password_incorrect', 'Current password is incorrect')
  }
  const hashedPassword = await runtime.hasher.hash(newPassword)
  // The other sessions end before the new password is stored (see resetComplete).
  const keep = { subject: claims.sub, sid: claims.sid }
  let revoked = await revokeSubjectSessions(ctx, [claims.sub, ...subjectsOf(user, email)], 'password_change', keep)
  const persisted = await persistPasswordUser(event, { ...user, email, hashedPassword })
  revoked += await revokeSubjectSessions(ctx, newSubjects(user, email, persisted), 'password_change', keep)
  ctx.logger.security('password_changed', { revokedSessions: revoked })
  return { success: true as const }
}
