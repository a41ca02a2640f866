import type { H3Event } from 'h3'
import type { RateLimitRuleName } from '../../types/rate-limit-options'
import type { AuthContext } from '../../server/lib/core/context'
import { authError, message, type Text } from '../../server/lib/edge/errors'
import { enforceRateLimit } from '../../server/lib/edge/rate-limit'
import { requireEmail } from '../../server/lib/edge/email'
import type { ResolvedPasswordHandlers } from './password-handlers'
import { BREACHED, checkPasswordPolicy, MAX_PASSWORD_BYTES, normalizePassword, passwordBytes, passwordForms, policyMessage, TOO_LONG } from './policy'
import type { PasswordRuntime } from './password-runtime'

/** A typed email in canonical form (400 `invalid_email`), counted by the per-email limit of `rule`. */
export async function limitedEmail(ctx: AuthContext, event: H3Event, rule: RateLimitRuleName, typed: string): Promise<string> {
  const email = requireEmail(typed)
  await enforceRateLimit(ctx, event, rule, { ip: false, email })
  return email
}

/** bcrypt's 72 bytes; no limit for the host's own hash. */
function byteLimit(handlers: ResolvedPasswordHandlers): number {
  return handlers.customHash ? Number.POSITIVE_INFINITY : MAX_PASSWORD_BYTES
}

/** The built-in policy, or the host's `validatePassword`; either way a password bcrypt would cut is refused. */
async function passwordViolations(runtime: PasswordRuntime, handlers: ResolvedPasswordHandlers, password: string): Promise<Text[]> {
  let violations: Text[]
  if (!handlers.validatePassword) violations = checkPasswordPolicy(password, runtime.options.passwordPolicy)
  else {
    const verdict = await handlers.validatePassword(password)
    violations = Array.isArray(verdict) ? verdict.map(String) : verdict === true ? [] : [message('policy_host_refused')]
  }
  if (passwordBytes(password) > byteLimit(handlers) && !violations.includes(TOO_LONG)) violations.push(TOO_LONG)
  return violations
}

/**
 * Checks a new password and returns it in normal form; 400 `password_policy` listing every violation.
 * The breach check runs last, for a password the policy accepts, and before any hashing.
 */
export async function requirePolicy(runtime: PasswordRuntime, handlers: ResolvedPasswordHandlers, typed: string): Promise<string> {
  const password = normalizePassword(typed)
  const violations = await passwordViolations(runtime, handlers, password)
  if (!violations.length && await runtime.breached(password)) violations.push(BREACHED)
  if (violations.length) throw authError('password_policy', policyMessage(violations))
  return password
}

/** Checks a typed password against a hash (null: unknown account); every refusal looks and takes the same. */
export function checkPassword(runtime: PasswordRuntime, handlers: ResolvedPasswordHandlers, typed: string, hash: string | null): Promise<boolean> {
  const { candidates, work } = passwordForms(typed, byteLimit(handlers))
  return runtime.hasher.verifyFirst(candidates, hash, work)
}
