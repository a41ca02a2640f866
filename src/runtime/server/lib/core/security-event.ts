/**
 * The one way the module reports a security event: logged with `logging.security`, and handed to the features
 * that record events (the audit log). Types and their meaning: shared/event-catalog.ts.
 */
import type { H3Event } from 'h3'
import type { AuthClaims } from '../../../types/auth'
import type { AuditDetail, AuditOutcome, SecurityEventType } from '../../../shared/event-catalog'
import { originalUserOf } from '../../../shared/original-user'
import { describeClient } from '../edge/client-description'
import type { AuthContext, SecurityEventDraft } from './context'

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
  /** Never a token, code, password, secret or full address. */
  details?: Record<string, AuditDetail | undefined>
  /**
   * Record one event of this type per `aggregate` key each `aggregate.seconds` (rate limits, refusals): the key
   * is hashed before it is stored, so it may hold an address or an email.
   */
  aggregate?: { key: string, seconds: number }
}

/** The fields of `input` with the caller's filled in and undefined details dropped. */
export function draftOf(ctx: Pick<AuthContext, 'options' | 'logger'>, event: H3Event | undefined, input: SecurityEventInput, now = Date.now()): SecurityEventDraft {
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
 * Reports a security event: to the log when `logging.security`, then to every feature that records events. A
 * recorder that fails is logged and never fails the request: what it reports has happened already.
 */
export async function securityEvent(ctx: AuthContext, event: H3Event | undefined, input: SecurityEventInput): Promise<void> {
  const recorders = ctx.features.filter(feature => feature.recordEvent)
  if (!recorders.length && !ctx.options.logging.security) return
  const draft = draftOf(ctx, event, input)
  const { event: _request, aggregate: _aggregate, ...logged } = draft
  ctx.logger.security(draft.type, logged)
  for (const feature of recorders) {
    try {
      await feature.recordEvent!(ctx, draft)
    }
    catch (error) {
      ctx.logger.error(`Recording the security event ${draft.type} failed (ignored)`, error)
    }
  }
}
