/**
 * The audit log of the Redis stores (TCP and REST): a stream of lines (`<prefix>{audit}:log`, field `e`) and
 * the chain's head (`<prefix>{audit}:head`, `<seq>:<mac>`), one hash tag (one cluster slot). Every step is one
 * script: an append stores its lines only when the head is still the one they were linked to.
 */
import type { AuditStorage } from './audit-log'
import type { ChainHead } from './audit-chain'
import type { ScriptClient } from '../../server/lib/store/types'
import { redisScript, runScript } from '../../server/lib/store/redis-scripts'
import { appendQueue, headOf } from './append-queue'

/**
 * KEYS: the stream, the head. ARGV: the head the lines link to ('' for none), the stream's length cap, the
 * new head, the lines. Stores them and answers 1, or answers the current head when it is another.
 */
const APPEND = redisScript(`local head = redis.call('GET', KEYS[2]) or ''
if head ~= ARGV[1] then return head end
for i = 4, #ARGV do
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'e', ARGV[i])
end
redis.call('SET', KEYS[2], ARGV[3])
return 1`)

/** KEYS: the stream. ARGV: XRANGE or XREVRANGE, its start and end, how many. */
const RANGE = redisScript(`return redis.call(ARGV[1], KEYS[1], ARGV[2], ARGV[3], 'COUNT', ARGV[4])`)

/** KEYS: the stream. ARGV: the oldest id kept (ms), the most entries kept. Answers how many went (roughly: whole nodes). */
const TRIM = redisScript(`return redis.call('XTRIM', KEYS[1], 'MINID', '~', ARGV[1]) + redis.call('XTRIM', KEYS[1], 'MAXLEN', '~', ARGV[2])`)

/** A stream entry id: the cursor of a page. */
const ENTRY_ID = /^\d{1,20}-\d{1,20}$/
const STORED_HEAD = /^(\d{1,16}):([\w-]+)$/

/** Appends retried with the head another process stored before giving up (each retry needs no extra read). */
const MAX_ATTEMPTS = 20

type Entry = [id: string, fields: string[]]

const isEntries = (value: unknown): value is Entry[] => Array.isArray(value) && value.every(entry => Array.isArray(entry) && entry.length === 2
  && typeof entry[0] === 'string' && Array.isArray(entry[1]) && entry[1].every(field => typeof field === 'string'))

/** The line of an entry (field `e`); '' when it has none (read as unreadable). */
function lineOf([, fields]: Entry): string {
  const index = fields.indexOf('e')
  return index >= 0 && index % 2 === 0 ? fields[index + 1] ?? '' : ''
}

function parseCursor(cursor: string): string {
  if (typeof cursor !== 'string' || !ENTRY_ID.test(cursor)) throw new TypeError('Invalid audit log cursor')
  return cursor
}

const encodeHead = (head: ChainHead | null): string => (head ? `${head.seq}:${head.mac}` : '')

function decodeHead(stored: string): ChainHead | null {
  if (stored === '') return null
  const match = STORED_HEAD.exec(stored)
  if (!match) throw new Error('The stored head of the audit log is malformed')
  return { seq: Number(match[1]), mac: match[2]! }
}

/** The keys of the log under the store's `prefix`: one hash tag, so one cluster slot. */
export function auditRedisKeys(prefix: string): { log: string, head: string } {
  return { log: `${prefix}{audit}:log`, head: `${prefix}{audit}:head` }
}

/** The audit log on a Redis store's scripts; the stream keeps about `maxEvents` entries. */
export function createRedisAuditStorage(scripts: ScriptClient, prefix: string, maxEvents: number): AuditStorage {
  const { log, head: headKey } = auditRedisKeys(prefix)
  const keys = [log, headKey]
  /** The head as this process last saw it stored ('': none); a wrong guess costs one retry. */
  let known = ''

  async function range(command: 'XRANGE' | 'XREVRANGE', start: string, end: string, count: number): Promise<{ lines: string[], next?: string }> {
    // One more than asked: whether there is a next page.
    const entries = await runScript(scripts, RANGE, [log], [command, start, end, count + 1])
    if (!isEntries(entries)) throw new Error('Unexpected answer of the audit log range script')
    const page = entries.slice(0, count)
    return { lines: page.map(lineOf), next: entries.length > count ? page.at(-1)![0] : undefined }
  }

  return {
    append: appendQueue(async (link) => {
      for (let attempt = 1; ; attempt++) {
        const lines = link(decodeHead(known))
        if (!lines.length) return
        const next = encodeHead(headOf(lines.at(-1)!))
        const answer = await runScript(scripts, APPEND, keys, [known, maxEvents, next, ...lines])
        if (answer === 1) {
          known = next
          return
        }
        if (typeof answer !== 'string') throw new Error('Unexpected answer of the audit log append script')
        if (attempt === MAX_ATTEMPTS) throw new Error(`The audit log's head changed under ${MAX_ATTEMPTS} appends in a row`)
        known = answer
      }
    }),

    async newest(cursor, count) {
      return range('XREVRANGE', cursor === undefined ? '+' : `(${parseCursor(cursor)}`, '-', count)
    },

    async oldest(since, cursor, count) {
      const start = cursor === undefined ? String(Number.isFinite(since) && since > 0 ? Math.ceil(since) : 0) : `(${parseCursor(cursor)}`
      const page = await range('XRANGE', start, '+', count)
      return { entries: page.lines.map(line => ({ line })), next: page.next }
    },

    async trim(before, maxEvents) {
      const removed = await runScript(scripts, TRIM, [log], [Number.isFinite(before) && before > 0 ? Math.floor(before) : 0, maxEvents])
      if (typeof removed !== 'number' || !Number.isSafeInteger(removed)) throw new Error('Unexpected answer of the audit log trim script')
      return removed
    },
  }
}
