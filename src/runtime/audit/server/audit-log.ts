/**
 * The audit log: chained events on the store the module already has. One implementation per driver behind
 * {@link AuditStorage}; chaining, reading and verifying are the same for all (audit-chain.ts).
 */
import type { AuditEvent, AuditVerification, ChainedAuditEvent } from '../audit-types'
import { linkEvents, parseChainedEvent, verifyEntries, type ChainHead, type ChainKey, type VerifiableEntry } from './audit-chain'

/** A page of stored lines and the cursor of the next one (none: the end). */
export interface StoredPage {
  lines: string[]
  next?: string
}

/** Where one driver keeps the chained lines. */
export interface AuditStorage {
  /**
   * Appends lines after the last stored event, atomically between the processes sharing the store: `chain`
   * gets the head it must link to (null: an empty log) and returns the lines; it runs again when another
   * process appended meanwhile.
   */
  append(chain: (head: ChainHead | null) => string[]): Promise<void>
  /** Lines newest first, before `cursor` (none: from the newest). */
  newest(cursor: string | undefined, count: number): Promise<StoredPage>
  /** Lines oldest first, from the first event at or after `since` (epoch ms), after `cursor`; a torn last line (a crash) as `torn`. */
  oldest(since: number, cursor: string | undefined, count: number): Promise<{ entries: VerifiableEntry[], next?: string }>
  /** Removes events older than `before` (epoch ms) and the oldest beyond `maxEvents`; resolves how many (may be approximate). */
  trim(before: number, maxEvents: number): Promise<number>
}

/** The audit log of one server process. */
export interface AuditLog {
  /** Chains `events` (in order) after whatever is stored and stores them; resolves them as stored. */
  append(events: readonly AuditEvent[]): Promise<ChainedAuditEvent[]>
  /** Stored events newest first, before `cursor`; unreadable lines are skipped. */
  newest(cursor: string | undefined, count: number): Promise<{ events: ChainedAuditEvent[], next?: string }>
  /** Stored events oldest first from `since` (epoch ms), page by page (export). */
  oldest(since?: number): AsyncIterable<ChainedAuditEvent>
  /** Checks the chain from `since` (epoch ms; default: everything kept). */
  verify(options?: { since?: number }): Promise<AuditVerification>
  /** Applies retention and the size cap now; resolves how many events went. */
  trim(now?: number): Promise<number>
}

/** How many lines a read asks the store for at once. */
export const PAGE_LINES = 500

/** How often (at most) a process applies retention, after an append (no timer: serverless hosts trim too; the size cap of Redis and memory holds at every append). */
export const TRIM_INTERVAL_MS = 10 * 60 * 1000

/**
 * The log over `storage`: chains under `keys[0]`, verifies under any of `keys`. Retention and the size cap are
 * applied after an append at most every {@link TRIM_INTERVAL_MS}, beside the request (`onTrimError` hears a failure).
 */
export function createAuditLog(storage: AuditStorage, keys: readonly ChainKey[], limits: { retentionSeconds: number, maxEvents: number }, onTrimError: (error: unknown) => void = () => {}): AuditLog {
  let trimmedAt = Date.now()
  const trim = (now = Date.now()) => {
    trimmedAt = now
    return storage.trim(now - limits.retentionSeconds * 1000, limits.maxEvents)
  }
  async function* entries(since: number): AsyncIterable<VerifiableEntry> {
    let cursor: string | undefined
    do {
      const page = await storage.oldest(since, cursor, PAGE_LINES)
      yield* page.entries
      cursor = page.next
    } while (cursor)
  }

  return {
    async append(events) {
      let stored: ChainedAuditEvent[] = []
      if (!events.length) return stored
      await storage.append((head) => {
        stored = linkEvents(keys[0]!, head, events)
        return stored.map(event => JSON.stringify(event))
      })
      if (Date.now() - trimmedAt >= TRIM_INTERVAL_MS) trim().catch(onTrimError)
      return stored
    },

    async newest(cursor, count) {
      const page = await storage.newest(cursor, count)
      return { events: page.lines.map(parseChainedEvent).filter(event => event !== undefined), next: page.next }
    },

    async* oldest(since = 0) {
      for await (const entry of entries(since)) {
        const event = 'line' in entry ? parseChainedEvent(entry.line) : undefined
        if (event) yield event
      }
    },

    verify: ({ since = 0 } = {}) => verifyEntries(keys, entries(since)),

    trim,
  }
}
