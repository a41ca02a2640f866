/**
 * Options, events and host handlers of the security audit log (`svcAuth.audit`). Setting the key (even to
 * `{}`) turns it on.
 */
import type { H3Event } from 'h3'
import type { Duration } from '../types/time-span'
import type { AuthClaims } from '../types/identity'
import type { SecurityEventFields } from '../shared/event-catalog'

export type { AuditDetail, AuditOutcome, SecurityEventFields, SecurityEventType } from '../shared/event-catalog'

export interface AuditOptions {
  /**
   * Key of the chain's HMACs (at least 32 bytes; env `NUXT_SVC_AUTH_AUDIT_SECRET`). Empty: a key derived from
   * `token.secret` (rotating that secret then needs its old value in `token.previousSecrets`).
   * @default ''
   */
  secret?: string
  /** Earlier values of `secret`: events chained under them still verify. @default [] */
  previousSecrets?: string[]
  /** How long events are kept (seconds or `'90d'`); older ones are trimmed. @default '90d' */
  retention?: Duration
  /** Most events kept; the oldest go first (on fs: whole days). The memory store keeps at most 10,000. @default 1000000 */
  maxEvents?: number
  /** Also write each event as one JSON line to standard output (twelve-factor logs). @default false */
  stdout?: boolean
  /** Record `POST /auth/refresh` too (`session.refreshed`); off, refreshes would drown the rest. @default false */
  refreshes?: boolean
  /** The path of the admin page (search users, their sessions and audit trail); `false`: no page in the build. @default false */
  adminPage?: string | false
}

/** {@link AuditOptions} with every default applied, durations in seconds. */
export type ResolvedAuditOptions = Required<Omit<AuditOptions, 'retention'>> & { retention: number }

/** A security event as it is recorded, answered and passed to `svc:audit`. */
export interface AuditEvent extends SecurityEventFields {
  /** Unique id (`evt_` and 22 characters). */
  id: string
  /** When it happened (ISO 8601). */
  at: string
}

/** An event as it is stored: with its place in the chain. */
export interface ChainedAuditEvent extends AuditEvent {
  /** Position in the log (1, 2, …): a gap shows a deleted event. */
  seq: number
  /** The previous event's `mac` ('' for the first event of a log). */
  prev: string
  /** Id of the key of {@link mac}. */
  kid: string
  /** HMAC-SHA256 (base64url) of `prev` and this event's canonical JSON. */
  mac: string
}

/** What `verifyAuditLog` found: `ok`, or the first event where the chain breaks and why. */
export interface AuditVerification {
  ok: boolean
  /** Events checked. */
  checked: number
  /** The first break: the event's `seq` (or its position when unreadable) and what is wrong. */
  problem?: { seq: number, id?: string, reason: 'gap' | 'edited' | 'reordered' | 'unknown_key' | 'unreadable' }
  /** A last line cut short by a crash (fs); the events before it verify. */
  tornTail?: boolean
}

/**
 * Payload of `svc:login:newDevice`: a login from a browser family and network the user has not logged in from
 * within the log's retention. The first login the log knows of announces nothing.
 */
export interface NewDevicePayload {
  userId: string
  /** The new session. */
  sessionId: string
  client: AuditEvent['client']
  /** The login's provider. */
  provider?: string
  event: H3Event
  /** The locale of the login's request (docs/i18n.md), e.g. `de`. */
  locale: string
  /** A warning email in that locale, ready to send to the user. */
  message: { subject: string, text: string }
}

/** Handlers of the audit log (`defineAuthHandlers({ audit })`). */
export interface AuditHandlers {
  /**
   * True when a user may read the whole audit log (`GET /auth/audit`, the admin page). Without organizations this
   * is the only way in; with them, a member whose role grants `audit:read` reads their organization's events.
   */
  isAuditReader?: (user: AuthClaims, event: H3Event) => boolean | Promise<boolean>
}
