import type { H3Event } from 'h3'
import { getRequestHeader, sendRedirect } from 'h3'
import type { z } from 'zod'
import type { MagicCodeAction } from '../../types/auth'
import type { AuthContext } from '../../server/lib/core/context'
import { authError } from '../../server/lib/edge/errors'
import { tooMany } from '../../server/lib/edge/rate-limit'
import { retryAfterOf } from '../../server/lib/edge/rate-counter'
import { createMagicCode, discardMagicCode, verifyMagicCode, type MagicCodeRecord } from './magic-code'
import type { verifyRequest } from '../../server/lib/edge/request-schemas'
import { requireEmail } from '../../server/lib/edge/email'
import type { ResolvedPasswordHandlers } from './password-handlers'
import { verifyLink } from '../password-paths'
import { securityEvent } from '../../server/lib/edge/security-event'
import { localizedEmail } from '../../server/lib/core/locale-of'
import type { PasswordRuntime } from './password-runtime'
import type { ResolvedPasswordOptions } from '../password-types'

const CODE_PATTERN = /^\d{6}$/

/** How long a code lives and how many attempts it allows (the password provider's options, or the magic link's). */
export type CodeLimits = Pick<ResolvedPasswordOptions, 'magicCodeTTL' | 'magicCodeMaxAttempts'>

/** Stores a new code (replacing a pending one) and delivers it; a failed delivery leaves no usable code (500 `send_failed`). */
export async function issueCode(ctx: AuthContext, event: H3Event, runtime: PasswordRuntime, handlers: ResolvedPasswordHandlers, input: { email: string, action: MagicCodeAction, data?: Record<string, unknown> }): Promise<void> {
  const ttlSeconds = runtime.options.magicCodeTTL
  const { code, flow } = await createMagicCode(ctx, { email: input.email, action: input.action, data: input.data ?? {}, ttlSeconds })
  const link = verifyLink(ctx.options.publicUrl ?? '', ctx.options.endpoints.authPath, input.action, code, flow)
  try {
    const email = await localizedEmail(ctx, event, input.action, { code, link, minutes: Math.ceil(ttlSeconds / 60) })
    await handlers.sendVerificationCode(input.email, code, input.action, { link, flow, expiresAt: new Date(Date.now() + ttlSeconds * 1000), ...email })
  }
  catch (error) {
    await discardMagicCode(ctx, input.action, input.email, { code })
    ctx.logger.error(`Sending the ${input.action} code failed`, error)
    throw authError('send_failed')
  }
}

/** Verifies a code of `action` from a link's query or a form's body; 400 `invalid_verification_code` or `too_many_attempts`. */
export async function verifyCode<TData>(ctx: AuthContext, event: H3Event, codes: CodeLimits, action: MagicCodeAction, input: z.output<typeof verifyRequest>): Promise<MagicCodeRecord<TData>> {
  const code = input.code.trim()
  const email = input.email === undefined || input.email.trim() === '' ? undefined : requireEmail(input.email)
  const flow = input.flow?.trim() || undefined
  const invalid = () => authError('invalid_verification_code')
  if (!CODE_PATTERN.test(code)) throw invalid()
  const limits = ctx.options.rateLimit
  const on = limits?.enabled === true
  const codeOnlyBudget = on ? { max: limits.codeOnlyVerify.misses, windowSeconds: limits.codeOnlyVerify.window } : undefined
  const emailFailureBudget = on && limits.verifyFailures.perEmail > 0 ? { max: limits.verifyFailures.perEmail, windowSeconds: limits.verifyFailures.window } : undefined
  const result = await verifyMagicCode<TData>(ctx, { action, code, email, flow, maxAttempts: codes.magicCodeMaxAttempts, ttlSeconds: codes.magicCodeTTL, codeOnlyBudget, emailFailureBudget })
  if (result.status === 'budget_exhausted') {
    await securityEvent(ctx, event, { type: 'lockout', outcome: 'failure', actor: null, details: { reason: 'budget_exhausted', stage: action } })
    throw tooMany(await retryAfterOf(ctx, result.budgetKey, 1))
  }
  if (result.status === 'too_many_attempts') {
    await securityEvent(ctx, event, { type: 'lockout', outcome: 'failure', actor: null, details: { reason: 'too_many_attempts', stage: action } })
    throw authError('too_many_attempts')
  }
  if (result.status !== 'ok') throw invalid()
  return result.record
}

/**
 * Runs `work` once the answer of `event` has been handed to the socket (the next macrotask), so that neither
 * the answer nor its timing depends on it (whether an account exists); the platform's `waitUntil` keeps it alive.
 */
export function afterAnswer(event: H3Event, work: () => Promise<void>, onError: (error: unknown) => void): void {
  const done = new Promise<void>(resolve => setImmediate(resolve)).then(work).catch(onError)
  const waitUntil = (event as H3Event & { waitUntil?: (promise: Promise<unknown>) => void }).waitUntil
  if (typeof waitUntil === 'function') waitUntil.call(event, done)
}

/** True when a POST asks for JSON (fetch clients) rather than a page (HTML forms). */
function wantsJson(event: H3Event): boolean {
  if (event.method !== 'POST') return false
  const accept = getRequestHeader(event, 'accept') ?? ''
  return accept.includes('application/json') && !accept.includes('text/html')
}

/** The answer of a verify endpoint: 302 to `location`, or `{ success: true, redirect, ...extra }` for a JSON POST. */
export async function answerRedirect(event: H3Event, location: string, extra: Record<string, unknown> = {}): Promise<Record<string, unknown> | undefined> {
  if (wantsJson(event)) return { success: true, redirect: location, ...extra }
  await sendRedirect(event, location, 302)
  return undefined
}
