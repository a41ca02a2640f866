import type { H3Event } from 'h3'
import type { RateLimitRuleName } from '../../../types/rate-limit-options'
import type { EdgeContext } from './edge-context'
import type { RecordKey } from '../store/record-store'
import { authError } from './errors'
import { clientAddressOf, rateLimitSubject } from './client-address'
import { hitRateLimit, rateCounterKey, reserveUnits, retryAfterOf } from './rate-counter'
import { REFUSAL_WINDOW_SECONDS, securityEvent, type SecurityEventInput } from './security-event'

/**
 * Reports a refusal by a rate limit (`per`: the counter, `ip`, `email`, ...): one `rate_limited` event per rule and
 * counter each 5 minutes (the counter's key is hashed before it is stored; the details never hold it).
 */
export function rateLimited(ctx: EdgeContext, event: H3Event | undefined, rule: string, per: string, counter: string, extra: Pick<SecurityEventInput, 'caller' | 'organization'> = {}): Promise<void> {
  return securityEvent(ctx, event, { type: 'rate_limited', outcome: 'failure', ...extra, details: { rule, per }, aggregate: { key: `${rule}\0${counter}`, seconds: REFUSAL_WINDOW_SECONDS } })
}

/** 429 `rate_limited` with `Retry-After`. */
export function tooMany(retryAfter: number) {
  return authError('rate_limited', undefined, { 'retry-after': String(retryAfter) })
}

/** Enforces a rule of `svcAuth.rateLimit` per client address, and per email when given (429 `rate_limited`). */
export async function enforceRateLimit(ctx: EdgeContext, event: H3Event, name: RateLimitRuleName, keys: { ip?: boolean, email?: string } = { ip: true }): Promise<void> {
  const options = ctx.options.rateLimit
  if (!options?.enabled) return
  const rule = options[name]
  if (!rule) return
  const check = async (key: 'ip' | 'email', subject: string, max: number) => {
    const counter = `${name}:${key}:${subject}`
    const hit = await hitRateLimit(ctx, counter, max, rule.window)
    if (hit.allowed) return
    await rateLimited(ctx, event, name, key, counter)
    throw tooMany(hit.retryAfter)
  }
  if (keys.ip !== false && rule.perIp > 0) await check('ip', rateLimitSubject(clientAddressOf(ctx, event)), rule.perIp)
  if (keys.email && rule.perEmail > 0) await check('email', keys.email, rule.perEmail)
}

/** Units reserved by {@link reserveUnits}: give them back when what they stood for did not happen. */
export interface ReservedFailure {
  release(): Promise<void>
}

const NO_RESERVATION: ReservedFailure = { release: async () => {} }

/**
 * Counts a password login as failed before the password is checked, so concurrent guesses never
 * overdraw a limit (released when it was right). Per email and address, and per device cookie
 * (`device`: failures elsewhere never lock the owner's browser out) or else per email.
 */
export async function reserveLoginFailure(ctx: EdgeContext, event: H3Event, email: string, device?: string): Promise<ReservedFailure> {
  const options = ctx.options.rateLimit
  if (!options?.enabled) return NO_RESERVATION
  const rule = options.login
  const counters: Array<{ key: RecordKey, max: number, name: string }> = []
  if (rule.perEmailAndIp > 0) counters.push({ name: 'email+ip', key: rateCounterKey(ctx, `login-failed:${email}:${rateLimitSubject(clientAddressOf(ctx, event))}`), max: rule.perEmailAndIp })
  if (device) counters.push({ name: 'device', key: rateCounterKey(ctx, `login-failed-device:${device}`), max: rule.perEmailAndIp })
  else if (rule.perEmail > 0) counters.push({ name: 'email', key: rateCounterKey(ctx, `login-failed:${email}`), max: rule.perEmail })
  if (!counters.length) return NO_RESERVATION
  const reserved = await reserveUnits(ctx, counters, rule.window)
  if (reserved.granted) return reserved
  await rateLimited(ctx, event, 'login', counters.find(c => c.key === reserved.key)?.name ?? 'email', reserved.key.current)
  throw tooMany(await retryAfterOf(ctx, reserved.key, rule.window))
}
