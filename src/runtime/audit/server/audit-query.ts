/**
 * `GET <authPath>/audit`: a search of the log, newest first, in pages. Each request reads a bounded number of
 * stored events; its cursor says where the next one goes on (signed, so only a cursor the server made reaches
 * the storage).
 */
import type { AuditEvent, ChainedAuditEvent } from '../audit-types'
import type { AuthContext } from '../../server/lib/core/context'
import { authError, message } from '../../server/lib/edge/errors'
import { safeEqual } from '../../server/lib/store/crypto'
import { isRecord } from '../../shared/values'
import { PAGE_LINES } from './audit-log'
import { withoutChain } from './audit-chain'
import { auditLogOf } from './audit-recorder'
import type { AuditReader } from './audit-access'
import { AUDIT_SEARCH } from './audit-routes'

/**
 * How far out of time order events may be stored: each process appends what it saw a moment ago. A search
 * stops at the first event older than `since` by more than this.
 */
const CLOCK_MARGIN_MS = 60_000

/** A search as the route's query gives it (times in epoch ms). */
export interface AuditQuery {
  user?: string
  type?: string
  since?: number
  until?: number
  cursor?: string
  limit?: number
}

/** Where a search goes on: the storage's cursor of the page it was in (none: the newest), and the last `seq` read. */
interface Position {
  page?: string
  seq: number
}

const CURSOR_PURPOSE = 'audit-cursor'
const macOf = (ctx: AuthContext, text: string) => ctx.store.hash(CURSOR_PURPOSE, text).slice(0, 32)

function encodeCursor(ctx: AuthContext, position: Position): string {
  const text = Buffer.from(JSON.stringify(position)).toString('base64url')
  return `${text}.${macOf(ctx, text)}`
}

/** The position of a cursor this server made (under the current or a previous key), else 400 `bad_request`. */
function decodeCursor(ctx: AuthContext, cursor: string): Position {
  const [text = '', mac = '', extra] = cursor.split('.')
  const signed = extra === undefined && ctx.store.hashes(CURSOR_PURPOSE, text).some(hash => safeEqual(hash.slice(0, 32), mac))
  const value: unknown = signed ? JSON.parse(Buffer.from(text, 'base64url').toString()) : undefined
  if (!isRecord(value) || !Number.isSafeInteger(value.seq) || (value.page !== undefined && typeof value.page !== 'string')) throw authError('bad_request', message('invalid_cursor'))
  return { seq: value.seq as number, ...(value.page === undefined ? {} : { page: value.page }) }
}

/** True when the event answers the query, for this reader. */
function matches(event: ChainedAuditEvent, at: number, query: AuditQuery, reader: AuditReader): boolean {
  if (reader.organization !== undefined && event.organization !== reader.organization) return false
  if (query.user !== undefined && event.actor !== query.user && event.subject !== query.user && event.impersonator !== query.user) return false
  if (query.type !== undefined && (query.type.endsWith('.*') ? !event.type.startsWith(query.type.slice(0, -1)) : event.type !== query.type)) return false
  return (query.since === undefined || at >= query.since) && (query.until === undefined || at <= query.until)
}

/** One page of the search: at most `limit` events, newest first, and a cursor when it may go on. */
export async function queryAuditLog(ctx: AuthContext, reader: AuditReader, query: AuditQuery): Promise<{ events: AuditEvent[], cursor?: string }> {
  const limit = query.limit ?? AUDIT_SEARCH.defaultLimit
  const log = await auditLogOf(ctx)
  const start = query.cursor === undefined ? undefined : decodeCursor(ctx, query.cursor)
  let page = start?.page
  /** Events at or after this `seq` were read by an earlier page (or stored since the search began). */
  let before = start?.seq ?? Number.MAX_SAFE_INTEGER
  const events: AuditEvent[] = []
  let read = 0
  for (;;) {
    const stored = await log.newest(page, PAGE_LINES)
    for (const [i, event] of stored.events.entries()) {
      read++
      if (event.seq >= before) continue
      const at = Date.parse(event.at)
      if (query.since !== undefined && at < query.since - CLOCK_MARGIN_MS) return { events }
      before = event.seq
      if (matches(event, at, query, reader)) events.push(withoutChain(event))
      const last = !stored.next && i === stored.events.length - 1
      if (last) return { events }
      if (events.length === limit || read >= AUDIT_SEARCH.scanLimit) return { events, cursor: encodeCursor(ctx, { page, seq: before }) }
    }
    if (!stored.next) return { events }
    if (read >= AUDIT_SEARCH.scanLimit) return { events, cursor: encodeCursor(ctx, { page: stored.next, seq: before }) }
    page = stored.next
  }
}
