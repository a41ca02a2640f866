/**
 * The audit log of the fs store: one JSON-lines file per UTC day of append (`YYYY-MM-DD.jsonl`, never older
 * than the newest one) in `<base>/<prefix path>/audit/`, shared by every process on the directory. Appends
 * and trims run under the folder's lock file; each append is one durable write. A crash mid-append leaves at
 * most a torn last line: reads report it, and the next append cuts it off first.
 */
import fs from 'node:fs'
import { join } from 'node:path'
import type { AuditStorage } from './audit-log'
import { parseChainedEvent, type ChainHead, type VerifiableEntry } from './audit-chain'
import { withFileLockWaiting } from '../../server/lib/store/fs-exclusive'
import { appendSynced, hasCode, keySegments, writeAtomic } from '../../server/lib/store/fs-files'
import { isRecord } from '../../shared/values'
import { appendQueue, headOf } from './append-queue'

const SEGMENT = /^(\d{4}-\d{2}-\d{2})\.jsonl$/
/** A cursor: a segment's day and the byte offset of a line's start. */
const CURSOR = /^(\d{4}-\d{2}-\d{2}):(\d{1,15})$/
/** The chain's head, kept only while no segment is left (all trimmed): the next event links to it. */
const HEAD_FILE = 'head.json'
const NEWLINE = 0x0A
/** Segments are read in chunks of this size (from the end for the newest events). */
const CHUNK = 64 * 1024
const EMPTY: Buffer = Buffer.alloc(0)

/** The newest segment and the log's head: what an append continues. */
interface Tail {
  segment: string | undefined
  head: ChainHead | null
}

/** This process's last append: its head holds while the newest segment is this file (inode) as it left it. */
interface Cached extends Tail {
  size: number
  ino: number
  mtimeMs: number
}

/** A complete line of a segment: its text and byte range (`end` is after its newline). */
interface Line {
  line: string
  start: number
  end: number
}

/** The last moment a segment name can stand for (9999-12-31). */
const LAST_DAY_MS = Date.UTC(9999, 11, 31)

/** The UTC day of `ms` (`YYYY-MM-DD`), clamped to the days a segment can be named after. */
const dayOf = (ms: number): string => new Date(Math.min(Math.max(ms, 0), LAST_DAY_MS) || 0).toISOString().slice(0, 10)

function parseCursor(cursor: string): { segment: string, offset: number } {
  const match = typeof cursor === 'string' ? CURSOR.exec(cursor) : null
  if (!match) throw new TypeError('Invalid audit log cursor')
  return { segment: match[1]!, offset: Number(match[2]) }
}

/** `size` bytes of `fd` from `position` (fewer at the end of a file cut short meanwhile). */
function readAt(fd: number, position: number, size: number): Buffer {
  const buffer = Buffer.allocUnsafe(size)
  return buffer.subarray(0, fs.readSync(fd, buffer, 0, size, position))
}

/** Complete lines that end at or before `end`, newest first; bytes after the last newline (a torn tail) are skipped. */
function* linesBackward(fd: number, end: number): Generator<Line> {
  let position = end
  let pending: Buffer = EMPTY
  let lineEnd = -1
  for (;;) {
    if (lineEnd < 0) {
      lineEnd = pending.lastIndexOf(NEWLINE)
      if (lineEnd < 0) pending = EMPTY
    }
    if (lineEnd >= 0) {
      for (let nl = lineEnd > 0 ? pending.lastIndexOf(NEWLINE, lineEnd - 1) : -1; nl >= 0 || position === 0; nl = lineEnd > 0 ? pending.lastIndexOf(NEWLINE, lineEnd - 1) : -1) {
        yield { line: pending.toString('utf8', nl + 1, lineEnd), start: position + nl + 1, end: position + lineEnd + 1 }
        if (nl < 0) return
        lineEnd = nl
      }
      pending = pending.subarray(0, lineEnd + 1)
    }
    if (position === 0) return
    const chunk = readAt(fd, Math.max(0, position - CHUNK), Math.min(CHUNK, position))
    position -= Math.min(CHUNK, position)
    pending = pending.length ? Buffer.concat([chunk, pending]) : chunk
    if (lineEnd >= 0) lineEnd += chunk.length
  }
}

/** Lines from `start` (a line's start) to `size`, oldest first; bytes after the last newline come as `torn`. */
function* linesForward(fd: number, start: number, size: number): Generator<Line | { torn: string }> {
  let position = start
  let pending: Buffer = EMPTY
  while (position < size) {
    const chunk = readAt(fd, position, Math.min(CHUNK, size - position))
    if (!chunk.length) break
    position += chunk.length
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk
    const base = position - pending.length
    let from = 0
    for (let nl = pending.indexOf(NEWLINE); nl >= 0; nl = pending.indexOf(NEWLINE, from)) {
      yield { line: pending.toString('utf8', from, nl), start: base + from, end: base + nl + 1 }
      from = nl + 1
    }
    pending = pending.subarray(from)
  }
  if (pending.length) yield { torn: pending.toString('utf8') }
}

/** Runs `fn` on the open segment file, or resolves undefined when it is gone (trimmed). */
function withSegment<T>(path: string, flags: 'r' | 'r+', fn: (fd: number, size: number) => T): T | undefined {
  let fd: number
  try {
    fd = fs.openSync(path, flags)
  }
  catch (error) {
    if (hasCode(error, 'ENOENT')) return undefined
    throw error
  }
  try {
    return fn(fd, fs.fstatSync(fd).size)
  }
  finally {
    fs.closeSync(fd)
  }
}

/** When the line's event happened (epoch ms); NaN when it is not an event. */
function atOf(line: string): number {
  const event = parseChainedEvent(line)
  return event ? Date.parse(event.at) : Number.NaN
}

/** The audit log in the folder `audit` of the fs store's records under `prefix` (`base` is the store's directory). */
export function createFsAuditStorage(base: string, prefix: string): AuditStorage {
  const dir = join(base, ...keySegments(prefix), 'audit')
  const pathOf = (segment: string): string => join(dir, `${segment}.jsonl`)
  const lockPath = join(dir, 'log')
  let cache: Cached | undefined

  function segments(): string[] {
    try {
      return fs.readdirSync(dir).map(name => SEGMENT.exec(name)?.[1]).filter(day => day !== undefined).sort()
    }
    catch (error) {
      if (hasCode(error, 'ENOENT')) return []
      throw error
    }
  }

  /** The last complete line of a segment; a torn tail after it is cut off (only under the lock). */
  const lastLine = (segment: string): Line | undefined => withSegment(pathOf(segment), 'r+', (fd, size) => {
    const line = linesBackward(fd, size).next().value ?? undefined
    if ((line?.end ?? 0) < size) fs.ftruncateSync(fd, line?.end ?? 0)
    return line
  })

  function readHeadFile(): ChainHead | null {
    let value: unknown
    try {
      value = JSON.parse(fs.readFileSync(join(dir, HEAD_FILE), 'utf8'))
    }
    catch (error) {
      if (hasCode(error, 'ENOENT')) return null
      throw error
    }
    if (!isRecord(value) || !Number.isSafeInteger(value.seq) || typeof value.mac !== 'string') throw new Error(`The audit log's ${HEAD_FILE} is not a chain head`)
    return { seq: value.seq as number, mac: value.mac }
  }

  /** The tail of the log, under the lock: this process's cache while the newest segment is unchanged, else read. */
  function tail(): Tail {
    const all = segments()
    const newest = all.at(-1)
    if (newest === undefined) return { segment: undefined, head: readHeadFile() }
    const info = fs.statSync(pathOf(newest), { throwIfNoEntry: false })
    if (cache?.segment === newest && info?.size === cache.size && info.ino === cache.ino && info.mtimeMs === cache.mtimeMs) return cache
    for (const segment of all.reverse()) {
      const last = lastLine(segment)
      if (!last) continue
      const event = parseChainedEvent(last.line)
      if (!event) throw new Error(`The last line of the audit log segment ${segment} is not an event: the log needs repair`)
      return { segment: newest, head: { seq: event.seq, mac: event.mac } }
    }
    return { segment: newest, head: readHeadFile() }
  }

  const locked = <T>(fn: () => Promise<T>): Promise<T> => {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    return withFileLockWaiting(lockPath, fn)
  }

  /** Seq of a segment's first event (NaN when unreadable). */
  const firstSeq = (segment: string): number => withSegment(pathOf(segment), 'r', (fd, size) => {
    const first = linesForward(fd, 0, size).next().value
    return first && 'line' in first ? parseChainedEvent(first.line)?.seq : undefined
  }) ?? Number.NaN

  return {
    append: appendQueue(link => locked(async () => {
      const { segment: newest, head } = tail()
      const lines = link(head)
      if (!lines.length) return
      const today = dayOf(Date.now())
      // Never before the newest segment (another process's clock may be ahead): segments stay in order.
      const segment = newest !== undefined && newest > today ? newest : today
      const bytes = Buffer.from(lines.map(line => `${line}\n`).join(''))
      cache = undefined
      await appendSynced(pathOf(segment), bytes)
      // Still under the lock: the file as this append left it.
      const { size, ino, mtimeMs } = fs.statSync(pathOf(segment))
      cache = { segment, size, ino, mtimeMs, head: headOf(lines.at(-1)!) }
    })),

    async newest(cursor, count) {
      const from = cursor === undefined ? undefined : parseCursor(cursor)
      const lines: string[] = []
      let last = ''
      for (const segment of segments().reverse()) {
        if (from && segment > from.segment) continue
        const more = withSegment(pathOf(segment), 'r', (fd, size) => {
          for (const line of linesBackward(fd, from?.segment === segment ? Math.min(from.offset, size) : size)) {
            if (lines.length === count) return true
            lines.push(line.line)
            last = `${segment}:${line.start}`
          }
          return false
        })
        if (more) return { lines, next: last }
      }
      return { lines }
    },

    async oldest(since, cursor, count) {
      const from = cursor === undefined ? { segment: dayOf(since), offset: 0 } : parseCursor(cursor)
      const all = segments()
      const entries: VerifiableEntry[] = []
      let skipping = cursor === undefined
      let last = ''
      for (const [index, segment] of all.entries()) {
        if (segment < from.segment) continue
        const more = withSegment(pathOf(segment), 'r', (fd, size) => {
          const start = segment === from.segment ? from.offset : 0
          if (start > 0 && (start > size || readAt(fd, start - 1, 1)[0] !== NEWLINE)) throw new TypeError('Invalid audit log cursor')
          for (const item of linesForward(fd, start, size)) {
            if (entries.length === count) return true
            if ('torn' in item) {
              // Only the newest segment's tail is a crash's; a torn line elsewhere is damage (unreadable).
              entries.push(index === all.length - 1 ? { torn: true } : { line: item.torn })
              return false
            }
            if (skipping && atOf(item.line) < since) continue
            skipping = false
            entries.push({ line: item.line })
            last = `${segment}:${item.end}`
          }
          return false
        })
        if (more) return { entries, next: last }
      }
      return { entries }
    },

    trim: (before, maxEvents) => locked(async () => {
      const all = segments()
      const { head } = tail()
      let keep = 0
      // Whole segments whose newest event is older than `before`, oldest first.
      while (keep < all.length) {
        const line = lastLine(all[keep]!)
        if (line && !(atOf(line.line) < before)) break
        keep++
      }
      // The oldest segments while the newer ones alone hold maxEvents.
      const last = head?.seq ?? 0
      while (keep < all.length - 1 && last - firstSeq(all[keep + 1]!) + 1 >= maxEvents) keep++
      if (!keep) return 0
      // The head outlives the segments: the next event still links to it and carries on its seq.
      if (keep === all.length && head) await writeAtomic(join(dir, HEAD_FILE), JSON.stringify(head))
      const firsts = all.slice(0, keep + 1).map(firstSeq)
      let removed = 0
      for (let i = 0; i < keep; i++) {
        const count = (i + 1 < all.length ? firsts[i + 1]! : last + 1) - firsts[i]!
        removed += Number.isFinite(count) && count > 0 ? count : 0
        fs.rmSync(pathOf(all[i]!), { force: true })
      }
      cache = undefined
      return removed
    }),
  }
}
