import { hasDotSegment, normalizeKey } from 'unstorage'
import type { Storage } from 'unstorage'
import { commitBlocked, commitInSteps } from './commit'
import { createKeyedLock } from './lock'
import { assertMapField, type MapEntry, type StoreBackend } from './types'
import { isRecord } from '../../../shared/values'

/** Stored form of an entry for drivers without native TTL: expiry time (epoch ms) and value. */
export interface Envelope {
  e: number
  v: string
}

/** Serialise a value with its absolute expiry time (epoch ms). */
export function encodeEnvelope(value: string, expiresAt: number): string {
  return JSON.stringify({ e: expiresAt, v: value } satisfies Envelope)
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  }
  catch {
    return null
  }
}

/** Parse a stored envelope (JSON text, bytes or a parsed object); null when malformed. */
export function decodeEnvelope(raw: unknown): Envelope | null {
  let data = raw
  if (typeof data === 'string') data = parseJson(data)
  else if (data instanceof Uint8Array) data = parseJson(new TextDecoder().decode(data))
  if (!isRecord(data)) return null
  const { e, v } = data
  if (typeof e !== 'number' || !Number.isFinite(e) || typeof v !== 'string') return null
  return { e, v }
}

/** True while the entry has not reached its expiry time. */
export function isLive(envelope: Envelope, now: number = Date.now()): boolean {
  return envelope.e > now
}

/** Validate a time to live and round it up to whole milliseconds. Throws a RangeError when it is not a positive finite number. */
export function toTtlMs(ttlMs: number): number {
  if (typeof ttlMs !== 'number' || !Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw new RangeError(`Invalid TTL ${String(ttlMs)}: a positive number of milliseconds is required`)
  }
  return Math.ceil(ttlMs)
}

/** A key no check below refuses: see {@link assertStorageKey}. */
const PLAIN_KEY = /^[\w-]+(?::[\w-]+)*$/

/** Reject keys unstorage would rewrite, end in `$` or hold `.`/`..` segments: two keys never alias one entry. */
export function assertStorageKey(key: string): void {
  if (typeof key === 'string' && PLAIN_KEY.test(key)) return
  const valid = typeof key === 'string' && key !== '' && normalizeKey(key) === key
    && !key.endsWith('$') && !hasDotSegment(key)
  if (!valid) throw new TypeError(`Invalid store key ${JSON.stringify(key)}`)
}

/** Validate a counter step: a non-zero safe integer. */
export function toStep(by: number): number {
  if (!Number.isSafeInteger(by) || by === 0) throw new RangeError(`Invalid counter step ${String(by)}: a non-zero integer is required`)
  return by
}

/** Parse a stored counter value; throws like Redis INCR when the entry is not an integer. */
export function parseCounter(value: string): number {
  const n = Number(value)
  if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(n)) {
    throw new TypeError('Stored value is not an integer or out of range')
  }
  return n
}

/** Run `fn` over `items` with at most `limit` calls in flight. */
async function forEachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T)
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}

const IO_CONCURRENCY = 32

/** Options of {@link createEnvelopeBackend}. */
export interface EnvelopeBackendOptions {
  driver: 'memory' | 'fs'
  /** unstorage instance holding the envelopes as raw strings. */
  storage: Storage
  /** Remove an entry and return its raw content in one step (default: read then remove, under the lock). */
  takeRaw?: (key: string) => Promise<string | null>
  /** Create an entry unless a live one exists, atomically between processes, then do `after`; true when created. */
  createRaw?: (key: string, raw: string, stale: (current: string) => boolean, after?: { copies: readonly string[], alongside?: () => Promise<unknown> }) => Promise<boolean>
  /** Extra clean-up run by `sweep()` (not counted in its result). */
  housekeeping?: () => Promise<void>
}

/** A {@link StoreBackend} on unstorage without native TTL: {@link Envelope}s, writes serialised per key. */
export function createEnvelopeBackend(options: EnvelopeBackendOptions): StoreBackend {
  const { storage } = options
  const lock = createKeyedLock()

  const read = async (key: string): Promise<Envelope | null> =>
    decodeEnvelope(await storage.getItemRaw<unknown>(key))

  const readLive = async (key: string, now: number = Date.now()): Promise<Envelope | null> => {
    const envelope = await read(key)
    return envelope && isLive(envelope, now) ? envelope : null
  }

  const write = (key: string, value: string, expiresAt: number): Promise<void> =>
    storage.setItemRaw(key, encodeEnvelope(value, expiresAt))

  const takeRaw = options.takeRaw ?? (async (key: string): Promise<string | null> => {
    const raw = await storage.getItemRaw<unknown>(key)
    if (raw === null || raw === undefined) return null
    await storage.removeItem(key)
    return typeof raw === 'string' ? raw : JSON.stringify(raw)
  })

  const withKey = <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    assertStorageKey(key)
    return lock.run(key, fn)
  }

  const isStale = (current: string): boolean => {
    const envelope = decodeEnvelope(current)
    return !envelope || !isLive(envelope)
  }

  const fieldKey = (key: string, field: string): string => {
    assertMapField(field)
    return `${key}:${field}`
  }

  const backend: StoreBackend = {
    driver: options.driver,

    async get(key) {
      assertStorageKey(key)
      return (await readLive(key))?.v ?? null
    },

    async set(key, value, ttlMs) {
      const ttl = toTtlMs(ttlMs)
      return withKey(key, () => write(key, value, Date.now() + ttl))
    },

    async setIfAbsent(key, value, ttlMs) {
      const ttl = toTtlMs(ttlMs)
      return withKey(key, async () => {
        if (options.createRaw) return options.createRaw(key, encodeEnvelope(value, Date.now() + ttl), isStale)
        if (await readLive(key)) return false
        await write(key, value, Date.now() + ttl)
        return true
      })
    },

    async take(key) {
      return withKey(key, async () => {
        const envelope = decodeEnvelope(await takeRaw(key))
        return envelope && isLive(envelope) ? envelope.v : null
      })
    },

    async incr(key, ttlMs, by = 1) {
      const ttl = toTtlMs(ttlMs)
      const step = toStep(by)
      return withKey(key, async () => {
        const current = await readLive(key)
        if (!current && step < 0) return 0
        const next = (current ? parseCounter(current.v) : 0) + step
        await write(key, String(next), current ? current.e : Date.now() + ttl)
        return next
      })
    },

    async ttl(key) {
      assertStorageKey(key)
      const now = Date.now()
      const envelope = await readLive(key, now)
      return envelope ? envelope.e - now : null
    },

    async del(key) {
      return withKey(key, () => storage.removeItem(key))
    },

    async keys(prefix) {
      const base = prefix.slice(0, prefix.lastIndexOf(':') + 1)
      const candidates = (await storage.getKeys(base)).filter(key => key.startsWith(prefix))
      const now = Date.now()
      const live: string[] = []
      await forEachLimit(candidates, IO_CONCURRENCY, async (key) => {
        if (await readLive(key, now)) live.push(key)
      })
      return live.sort()
    },

    mapSet: async (key, field, value, ttlMs) => backend.set(fieldKey(key, field), value, ttlMs),

    async mapEntries(key) {
      assertStorageKey(key)
      const prefix = `${key}:`
      const now = Date.now()
      const entries: MapEntry[] = []
      const candidates = (await storage.getKeys(prefix)).filter(k => k.startsWith(prefix) && !k.slice(prefix.length).includes(':'))
      await forEachLimit(candidates, IO_CONCURRENCY, async (k) => {
        const envelope = await readLive(k, now)
        if (envelope) entries.push({ field: k.slice(prefix.length), value: envelope.v, expiresAt: envelope.e })
      })
      return entries.sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0))
    },

    mapDelete: async (key, field) => backend.del(fieldKey(key, field)),

    async commit(op) {
      const { createRaw } = options
      if (!createRaw) return commitInSteps(backend, op)
      // One entry under every name (fs: one durable file, hard links): the claim creates it.
      const blocked = await commitBlocked(backend, op)
      if (blocked) return blocked
      const copies = [...op.mapCopies.map(copy => fieldKey(copy.key, copy.field)), ...op.copies]
      for (const copy of copies) assertStorageKey(copy)
      const raw = encodeEnvelope(op.claim.value, Date.now() + toTtlMs(op.claim.ttlMs))
      const alongside = () => Promise.all(op.deletes.map(key => backend.del(key)))
      return await withKey(op.claim.key, () => createRaw(op.claim.key, raw, isStale, { copies, alongside })) ? 'claimed' : 'taken'
    },

    publish: () => Promise.resolve(),

    async subscribe(_channel, _onMessage, onResync) {
      onResync()
      return () => Promise.resolve()
    },

    async sweep() {
      let removed = 0
      const keys = await storage.getKeys()
      await forEachLimit(keys, IO_CONCURRENCY, key => lock.run(key, async () => {
        const envelope = await read(key)
        if (envelope && !isLive(envelope)) {
          await storage.removeItem(key)
          removed++
        }
      }))
      await options.housekeeping?.()
      return removed
    },

    async dispose() {
      await storage.dispose()
    },
  }
  return backend
}
