/** The audit log of the memory store: a bounded ring of lines in this process (development and tests). */
import type { AuditStorage } from './audit-log'
import type { ChainHead } from './audit-chain'

interface Entry {
  seq: number
  /** Epoch ms of the event. */
  at: number
  line: string
}

/** A page's cursor: a `seq`. */
const CURSOR = /^\d{1,16}$/

function parseCursor(cursor: string): number {
  if (typeof cursor !== 'string' || !CURSOR.test(cursor)) throw new TypeError('Invalid audit log cursor')
  return Number(cursor)
}

/** A ring of at most `capacity` lines; the cursor of a page is a `seq`. */
export function createMemoryAuditStorage(capacity: number): AuditStorage {
  let entries: Entry[] = []
  let head: ChainHead | null = null

  const drop = (count: number): number => {
    if (count > 0) entries = entries.slice(count)
    return Math.max(count, 0)
  }

  return {
    async append(chain) {
      // One synchronous step: nothing else runs between reading the head and storing the lines.
      const lines = chain(head)
      for (const line of lines) {
        const { seq, at, mac } = JSON.parse(line) as { seq: number, at: string, mac: string }
        entries.push({ seq, at: Date.parse(at), line })
        head = { seq, mac }
      }
      drop(entries.length - capacity)
    },

    async newest(cursor, count) {
      const before = cursor === undefined ? Number.POSITIVE_INFINITY : parseCursor(cursor)
      const older = entries.filter(entry => entry.seq < before)
      const page = older.slice(-count).reverse()
      return { lines: page.map(entry => entry.line), next: older.length > count ? String(page.at(-1)!.seq) : undefined }
    },

    async oldest(since, cursor, count) {
      const after = cursor === undefined ? 0 : parseCursor(cursor)
      const newer = entries.filter(entry => entry.seq > after && entry.at >= since)
      const page = newer.slice(0, count)
      return { entries: page.map(entry => ({ line: entry.line })), next: newer.length > count ? String(page.at(-1)!.seq) : undefined }
    },

    async trim(before, maxEvents) {
      const old = entries.findIndex(entry => entry.at >= before)
      return drop(Math.max(old === -1 ? entries.length : old, entries.length - maxEvents))
    },
  }
}
