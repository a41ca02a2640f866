import type { H3Event } from 'h3'
import type { ModuleOptions, Parsed } from '../../../types/options'
import type { SecurityEventFields } from '../../../shared/event-catalog'
import type { RecordStore } from '../store/record-store'
import type { Logger } from './logger'

/** What the edge (guards, rate limits, cookies) needs of the auth context; `AuthContext` extends it. */
export interface EdgeContext {
  /** The options, checked and parsed once (durations in seconds). */
  options: Parsed<ModuleOptions>
  store: RecordStore
  logger: Logger
  /**
   * Hands a security event to the features that record events (the audit log), each failure logged and
   * ignored; undefined when no feature records events. Only `securityEvent` (security-event.ts) calls it.
   */
  recordEvent?: (draft: SecurityEventDraft) => Promise<void>
}

/** A security event as the features that record events receive it (no id or chain yet). */
export interface SecurityEventDraft extends SecurityEventFields {
  /** Epoch ms. */
  at: number
  aggregate?: { key: string, seconds: number }
  /** The request it happened in (for hooks); undefined for events outside a request. */
  event?: H3Event
}
