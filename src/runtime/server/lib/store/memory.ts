import { assertStorageKey, parseCounter, toStep, toTtlMs, type Envelope } from './envelope'
import { assertMapField, type MapEntry, type StoreBackend } from './types'

/** In-process backend: a Map of envelopes, each operation one synchronous step; not shared, lost on restart. */
export function createMemoryBackend(): StoreBackend {
  const data = new Map<string, Envelope>()

  /** The live entry of a (checked) key, or undefined. */
  const live = (key: string, now: number = Date.now()): Envelope | undefined => {
    const entry = data.get(key)
    return entry && entry.e > now ? entry : undefined
  }

  const fieldKey = (key: string, field: string): string => {
    assertMapField(field)
    return `${key}:${field}`
  }

  /** Writes (or replaces) an entry; `ttlMs` and `key` are checked. */
  const write = (key: string, value: string, ttlMs: number): void => {
    const ttl = toTtlMs(ttlMs)
    assertStorageKey(key)
    data.set(key, { e: Date.now() + ttl, v: value })
  }

  /** Live keys that start with `prefix`, sorted. */
  const liveKeys = (prefix: string): string[] => {
    const now = Date.now()
    const keys: string[] = []
    for (const [key, entry] of data) {
      if (entry.e > now && key.startsWith(prefix)) keys.push(key)
    }
    return keys.sort()
  }

  const backend: StoreBackend = {
    driver: 'memory',

    async get(key) {
      assertStorageKey(key)
      return live(key)?.v ?? null
    },

    async set(key, value, ttlMs) {
      write(key, value, ttlMs)
    },

    async setIfAbsent(key, value, ttlMs) {
      const ttl = toTtlMs(ttlMs)
      assertStorageKey(key)
      if (live(key)) return false
      data.set(key, { e: Date.now() + ttl, v: value })
      return true
    },

    async take(key) {
      assertStorageKey(key)
      const entry = live(key)
      data.delete(key)
      return entry?.v ?? null
    },

    async incr(key, ttlMs, by = 1) {
      const ttl = toTtlMs(ttlMs)
      const step = toStep(by)
      assertStorageKey(key)
      const current = live(key)
      if (!current && step < 0) return 0
      const next = (current ? parseCounter(current.v) : 0) + step
      data.set(key, { e: current ? current.e : Date.now() + ttl, v: String(next) })
      return next
    },

    async ttl(key) {
      assertStorageKey(key)
      const now = Date.now()
      const entry = live(key, now)
      return entry ? entry.e - now : null
    },

    async del(key) {
      assertStorageKey(key)
      data.delete(key)
    },

    async keys(prefix) {
      return liveKeys(prefix)
    },

    async mapSet(key, field, value, ttlMs) {
      write(fieldKey(key, field), value, ttlMs)
    },

    async mapEntries(key) {
      assertStorageKey(key)
      const prefix = `${key}:`
      const now = Date.now()
      const entries: MapEntry[] = []
      for (const [k, entry] of data) {
        if (entry.e > now && k.startsWith(prefix) && !k.includes(':', prefix.length)) entries.push({ field: k.slice(prefix.length), value: entry.v, expiresAt: entry.e })
      }
      return entries.sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0))
    },

    async mapDelete(key, field) {
      const k = fieldKey(key, field)
      assertStorageKey(k)
      data.delete(k)
    },

    async commit(op) {
      // Every name is checked before anything is read or written.
      const ttl = toTtlMs(op.claim.ttlMs)
      const copies = [...op.mapCopies.map(copy => fieldKey(copy.key, copy.field)), ...op.copies]
      for (const key of [...op.guards, ...op.taken, op.claim.key, ...copies, ...op.deletes]) assertStorageKey(key)
      const now = Date.now()
      if (op.guards.some(key => live(key, now))) return 'guarded'
      if (live(op.claim.key, now) || op.taken.some(key => live(key, now))) return 'taken'
      const expiresAt = now + ttl
      data.set(op.claim.key, { e: expiresAt, v: op.claim.value })
      // The map entries first, then the copies (a copy is never there without its map entries).
      for (const key of copies) data.set(key, { e: expiresAt, v: op.claim.value })
      for (const key of op.deletes) data.delete(key)
      return 'claimed'
    },

    publish: () => Promise.resolve(),

    async subscribe(_channel, _onMessage, onResync) {
      onResync()
      return () => Promise.resolve()
    },

    async sweep() {
      const now = Date.now()
      let removed = 0
      for (const [key, entry] of data) {
        if (entry.e <= now) {
          data.delete(key)
          removed++
        }
      }
      return removed
    },

    async dispose() {
      data.clear()
    },
  }
  return backend
}
