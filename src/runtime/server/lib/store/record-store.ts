import type { z } from 'zod'
import { plainSealer, safeEqual, type KeyHasher, type Sealer } from './crypto'
import { cachedOpen } from './open-cache'
import type { RecordType } from './record-types'
import type { CommitResult, StoreBackend } from './types'

/** How often (at most) a process sweeps expired records of drivers without native TTL. */
const SWEEP_INTERVAL_MS = 10 * 60 * 1000

/** `Commit` (types.ts) over records: a claim under a previous HMAC key counts as taken. */
export interface RecordCommit {
  /** Nothing is written when one of these records exists (e.g. the session's revocation mark). */
  guards: readonly RecordKey[]
  /** Created unless it exists: of concurrent commits of one claim, exactly one wins. */
  claim: { key: RecordKey, value: unknown, ttlSeconds: number }
  /** Keys nobody else writes that get the claim's value (and TTL) when it is won. */
  copies: readonly RecordKey[]
  /** Map entries that get the claim's value (and TTL) when it is won. */
  mapCopies: ReadonlyArray<{ key: RecordKey, field: string }>
  /** Removed once the claim is won. */
  deletes: readonly RecordKey[]
}

/** Shape of a stored record, checked on every read: anything else counts as absent. */
export type RecordSchema<T> = z.ZodType<T>

/** A record's key under the current HMAC key and the previous ones: reads fall back, writes go to `current`, removals clear all. */
export interface RecordKey {
  readonly current: string
  readonly previous: readonly string[]
}

/**
 * Typed JSON records at `<prefix><namespace>:<hmac(id)>` (never a raw token), sealed by `sealer`. A value
 * that does not decrypt, parse or match is reported through `onInvalid` and treated as absent.
 */
export interface RecordStore {
  /** Key of the record `id` of a record type (`id` is hashed: it never appears in storage). */
  key(namespace: RecordType, id: string): RecordKey
  /** The record at a key kept inside another record (`key.current` stored earlier). */
  at(storedKey: string): RecordKey
  /** True when `storedKey` (kept inside a record) is `key` under the current or a previous HMAC key. */
  matches(key: RecordKey, storedKey: string): boolean
  /** Key of a structure the store has one of (no id to hide), e.g. the revoked-session map. */
  namedKey(namespace: RecordType): RecordKey
  /** Keyed hash (HMAC) of a value for one purpose, under the current key. */
  hash(purpose: string, value: string): string
  /** The same hash under the current and every previous key (to match values stored before a rotation). */
  hashes(purpose: string, value: string): string[]
  read<T>(key: RecordKey, schema: RecordSchema<T>): Promise<T | null>
  write<T>(key: RecordKey, value: T, ttlSeconds: number): Promise<void>
  /** Writes unless a live record exists (under the current key or, checked first, a previous one). */
  writeIfAbsent<T>(key: RecordKey, value: T, ttlSeconds: number): Promise<boolean>
  take<T>(key: RecordKey, schema: RecordSchema<T>): Promise<T | null>
  /** See {@link RecordCommit}. */
  commit(op: RecordCommit): Promise<CommitResult>
  /** Atomic counter: adds `by` (default 1) and returns the new value; see {@link StoreBackend.incr}. */
  incr(key: RecordKey, ttlSeconds: number, by?: number): Promise<number>
  /** Current value of a counter (0 when absent). */
  count(key: RecordKey): Promise<number>
  /** Seconds left before a live record expires, or null when there is none. */
  ttl(key: RecordKey): Promise<number | null>
  remove(key: RecordKey): Promise<void>
  /** Sorted storage keys of the live entries of a record type (a scan: for tests and tooling only). */
  list(namespace: RecordType): Promise<string[]>
  /** Writes one entry of a map (see {@link StoreBackend.mapSet}); the value is sealed like a record. */
  mapSet<T>(key: RecordKey, field: string, value: T, ttlSeconds: number): Promise<void>
  /** Live entries of a map whose values match the schema (others are ignored like invalid records). */
  mapEntries<T>(key: RecordKey, schema: RecordSchema<T>): Promise<Array<{ field: string, value: T, expiresAt: number }>>
  /** Removes an entry from the map under every key of `key`. */
  mapDelete(key: RecordKey, field: string): Promise<void>
  /** See {@link StoreBackend.publish}; the channel is prefixed like the keys. */
  publish(channel: string, message: string): Promise<void>
  /** See {@link StoreBackend.subscribe}; the channel is prefixed like the keys. */
  subscribe(channel: string, onMessage: (message: string) => void, onResync: () => void, onError?: (error: Error) => void): Promise<() => Promise<void>>
}

/** Why a stored value was ignored. */
export type InvalidRecordReason = 'undecryptable' | 'not_json' | 'wrong_shape'

export interface RecordStoreOptions {
  onSweepError?: (error: unknown) => void
  /** Called for every stored value that is ignored (its namespace only: keys are never logged). */
  onInvalid?: (namespace: string, reason: InvalidRecordReason) => void
  /** Called when a record was found under a previous HMAC key (a rotation is under way). */
  onPreviousKey?: () => void
}

/** The record store over a backend; `hashers` are the HMAC keys, current first. */
export function createRecordStore(backend: StoreBackend, prefix: string, hashers: readonly KeyHasher[], sealer: Sealer, options: RecordStoreOptions = {}): RecordStore {
  if (hashers.length === 0) throw new Error('createRecordStore needs at least one key hasher')
  const [hasher, ...previousHashers] = hashers as [KeyHasher, ...KeyHasher[]]
  let lastSweep = Date.now()
  const namespaceOf = (key: string): string => {
    const rest = key.startsWith(prefix) ? key.slice(prefix.length) : key
    const colon = rest.indexOf(':')
    return (colon < 0 ? rest : rest.slice(0, colon)) || 'unknown'
  }
  const invalid = (key: string, reason: InvalidRecordReason): null => {
    options.onInvalid?.(namespaceOf(key), reason)
    return null
  }
  // Values read again and again (map entries listed on every request) are opened once.
  const open = sealer === plainSealer ? plainSealer.open : cachedOpen(sealer)
  const decode = <T>(key: string, raw: string | null, schema: RecordSchema<T>): T | null => {
    if (raw === null) return null
    const plain = open(raw)
    if (plain === null) return invalid(key, 'undecryptable')
    let value: unknown
    try {
      value = JSON.parse(plain)
    }
    catch {
      return invalid(key, 'not_json')
    }
    const parsed = schema.safeParse(value)
    return parsed.success ? parsed.data : invalid(key, 'wrong_shape')
  }
  const encode = (value: unknown) => sealer.seal(JSON.stringify(value))
  const maybeSweep = () => {
    if (Date.now() - lastSweep < SWEEP_INTERVAL_MS) return
    lastSweep = Date.now()
    backend.sweep().catch(error => options.onSweepError?.(error))
  }
  const ms = (seconds: number) => Math.max(1, Math.round(seconds * 1000))

  const allKeys = (key: RecordKey): string[] => [key.current, ...key.previous]
  /** The first live raw value under the keys of `key`. */
  const readRaw = async (key: RecordKey, get: (k: string) => Promise<string | null>): Promise<{ raw: string, at: string } | null> => {
    for (const k of allKeys(key)) {
      const raw = await get(k)
      if (raw === null) continue
      if (k !== key.current) options.onPreviousKey?.()
      return { raw, at: k }
    }
    return null
  }

  const store: RecordStore = {
    key: (namespace, id) => ({
      current: `${prefix}${namespace}:${hasher.hash(namespace, id)}`,
      previous: previousHashers.map(h => `${prefix}${namespace}:${h.hash(namespace, id)}`),
    }),
    at: storedKey => ({ current: storedKey, previous: [] }),
    matches: (key, storedKey) => allKeys(key).some(k => safeEqual(k, storedKey)),
    namedKey: namespace => ({ current: `${prefix}${namespace}`, previous: [] }),
    hash: (purpose, value) => hasher.hash(purpose, value),
    hashes: (purpose, value) => hashers.map(h => h.hash(purpose, value)),
    async read(key, schema) {
      const found = await readRaw(key, k => backend.get(k))
      return found ? decode(found.at, found.raw, schema) : null
    },
    async write(key, value, ttlSeconds) {
      await backend.set(key.current, encode(value), ms(ttlSeconds))
      maybeSweep()
    },
    async writeIfAbsent(key, value, ttlSeconds) {
      for (const k of key.previous) {
        if (await backend.get(k) !== null) return false
      }
      const written = await backend.setIfAbsent(key.current, encode(value), ms(ttlSeconds))
      maybeSweep()
      return written
    },
    async take(key, schema) {
      const found = await readRaw(key, k => backend.take(k))
      return found ? decode(found.at, found.raw, schema) : null
    },
    async commit(op) {
      const result = await backend.commit({
        guards: op.guards.flatMap(allKeys),
        taken: op.claim.key.previous,
        claim: { key: op.claim.key.current, value: encode(op.claim.value), ttlMs: ms(op.claim.ttlSeconds) },
        copies: op.copies.map(copy => copy.current),
        mapCopies: op.mapCopies.map(copy => ({ key: copy.key.current, field: copy.field })),
        deletes: op.deletes.flatMap(allKeys),
      })
      maybeSweep()
      return result
    },
    incr: (key, ttlSeconds, by = 1) => backend.incr(key.current, ms(ttlSeconds), by),
    async count(key) {
      const raw = await backend.get(key.current)
      const n = raw === null ? 0 : Number(raw)
      return Number.isSafeInteger(n) ? n : 0
    },
    async ttl(key) {
      for (const k of allKeys(key)) {
        const left = await backend.ttl(k)
        if (left !== null) return left / 1000
      }
      return null
    },
    async remove(key) {
      await Promise.all(allKeys(key).map(k => backend.del(k)))
    },
    async list(namespace) {
      const base = `${prefix}${namespace}`
      const keys = await backend.keys(base)
      return keys.filter(k => k === base || k.startsWith(`${base}:`)).sort()
    },
    async mapSet(key, field, value, ttlSeconds) {
      await backend.mapSet(key.current, field, encode(value), ms(ttlSeconds))
    },
    async mapEntries<T>(key: RecordKey, schema: RecordSchema<T>) {
      const lists = await Promise.all(allKeys(key).map(async k => ({ k, entries: await backend.mapEntries(k) })))
      const seen = new Set<string>()
      const out: Array<{ field: string, value: T, expiresAt: number }> = []
      for (const { k, entries } of lists) {
        for (const entry of entries) {
          if (seen.has(entry.field)) continue
          const value = decode(k, entry.value, schema)
          if (value === null) continue
          seen.add(entry.field)
          out.push({ field: entry.field, value, expiresAt: entry.expiresAt })
        }
      }
      return out
    },
    async mapDelete(key, field) {
      await Promise.all(allKeys(key).map(k => backend.mapDelete(k, field)))
    },
    publish: (channel, message) => backend.publish(`${prefix}${channel}`, message),
    subscribe: (channel, onMessage, onResync, onError) => backend.subscribe(`${prefix}${channel}`, onMessage, onResync, onError),
  }
  return store
}
