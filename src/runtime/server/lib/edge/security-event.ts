/**
 * The one way the module reports a security event: logged with `logging.security`, and handed to the features
 * that record events (the audit log). Types and their meaning: shared/event-catalog.ts. It sits in the edge so
 * that the edge's own refusals (rate limits, cross-origin requests) are reported the same way.
 */
import type { H3Event } from 'h3'
import type { AuthClaims } from '../../../types/auth'
import type { AuditDetail, AuditOutcome, SecurityEventType } from '../../../shared/event-catalog'
import { originalUserOf } from '../../../shared/original-user'
import { clientAddressOf, rateLimitSubject } from './client-address'
import { describeClient } from './client-description'
import type { EdgeContext, SecurityEventDraft } from './edge-context'

/** What the code that saw an event knows of it; {@link securityEvent} adds the client, the time and the caller's fields. */
export interface SecurityEventInput {
  type: SecurityEventType
  /** @default 'success' */
  outcome?: AuditOutcome
  /** The bearer of the request: the actor (`sub`), the impersonator and the session (`sid`) unless given. */
  caller?: AuthClaims
  /** `sub` of who acted. @default the caller's */
  actor?: string | null
  /** `sub` of whom it concerns. @default the actor */
  subject?: string | null
  organization?: string
  /** @default the caller's `sid` */
  session?: string
  /** Never a token, code, password, secret, email or full address. */
  details?: Record<string, AuditDetail | undefined>
  /**
   * Record one event of this type per `aggregate` key each `aggregate.seconds` (rate limits, refusals): the key
   * is hashed before it is stored, so it may hold an address or an email.
   */
  aggregate?: { key: string, seconds: number }
}

/** The fields of `input` with the caller's filled in and undefined details dropped. */
export function draftOf(ctx: Pick<EdgeContext, 'options' | 'logger'>, event: H3Event | undefined, input: SecurityEventInput, now = Date.now()): SecurityEventDraft {
  const { caller } = input
  const actor = input.actor !== undefined ? input.actor : caller?.sub ?? null
  const impersonator = originalUserOf(caller)?.sub
  const session = input.session ?? (typeof caller?.sid === 'string' ? caller.sid : undefined)
  const client = event ? describeClient(event, ctx) : {}
  const details: Record<string, AuditDetail> = {}
  for (const [name, value] of Object.entries(input.details ?? {})) if (value !== undefined) details[name] = value
  return {
    type: input.type,
    outcome: input.outcome ?? 'success',
    at: now,
    actor,
    subject: input.subject !== undefined ? input.subject : actor,
    ...(impersonator ? { impersonator } : {}),
    ...(input.organization ? { organization: input.organization } : {}),
    ...(session ? { session } : {}),
    client: { family: client.userAgent ?? null, addressPrefix: client.address ?? null },
    details,
    ...(input.aggregate ? { aggregate: input.aggregate } : {}),
    ...(event ? { event } : {}),
  }
}

/**
 * Reports a security event: to the log when `logging.security`, then to the features that record events
 * (`ctx.recordEvent`). Never fails: what it reports has happened already. Without both it does no work.
 */
export async function securityEvent(ctx: EdgeContext, event: H3Event | undefined, input: SecurityEventInput): Promise<void> {
  if (!ctx.recordEvent && !ctx.options.logging.security) return
  const draft = draftOf(ctx, event, input)
  const { event: _request, aggregate: _aggregate, ...logged } = draft
  ctx.logger.security(draft.type, logged)
  await ctx.recordEvent?.(draft)
}

/** Refusals of one kind from one client within this many seconds are one event (rate limits, refused requests). */
export const REFUSAL_WINDOW_SECONDS = 300

/**
 * The aggregate of a failure anyone can cause at will (a refused request, a made-up code): one event per `kind`
 * and client each {@link REFUSAL_WINDOW_SECONDS}, the client counted as the rate limits count it (an IPv6 address
 * by its /64), so that a host going through its addresses is still one client.
 */
export function refusalWindow(ctx: EdgeContext, event: H3Event, kind: string): NonNullable<SecurityEventInput['aggregate']> {
  return { key: `${kind}\0${rateLimitSubject(clientAddressOf(ctx, event))}`, seconds: REFUSAL_WINDOW_SECONDS }
}

/**
 * Reports a request refused for how it came, not for who sent it (`request.refused`, `reason`): one event per
 * reason and client each {@link REFUSAL_WINDOW_SECONDS} ({@link refusalWindow}).
 */
export function requestRefused(ctx: EdgeContext, event: H3Event, reason: string, input: Pick<SecurityEventInput, 'caller' | 'details'> = {}): Promise<void> {
  return securityEvent(ctx, event, {
    ...input,
    type: 'request.refused',
    outcome: 'failure',
    details: { reason, ...input.details },
    aggregate: refusalWindow(ctx, event, reason),
  })
}
