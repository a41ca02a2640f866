import type { z } from 'zod'
import type { KeyHasher, Sealer } from '../crypto'
import type { StoreBackend } from './types'

/** How often (at most) a process sweeps expired records of drivers without native TTL. */
const SWEEP_INTERVAL_MS = 10 * 60 * 1000

/** Shape of a stored record, checked on every read: anything else counts as absent. */
export type RecordSchema<T> = z.ZodType<T>

/**
 * Typed JSON records over the backend. Keys are `<prefix><namespace>:<hmac(id)>`, so storage never
 * holds a raw token or code; values are sealed (aes-256-gcm) when `sealer` encrypts.
 *
 * Every read is checked against the record's schema: a value that does not decrypt, is not JSON
 * or has the wrong shape (corruption, tampering, a record of another version) is reported through
 * `onInvalid` and treated as absent, so no endpoint fails on it.
 */
export interface RecordStore {
  readonly backend: StoreBackend
  key(namespace: string, id: string): string
  /** Keyed hash (HMAC) of a value for one purpose, e.g. a binding secret kept in a record. */
  hash(purpose: string, value: string): string
  /** Prefix of every key of one namespace (for listing). */
  namespacePrefix(namespace: string): string
  read<T>(key: string, schema: RecordSchema<T>): Promise<T | null>
  write<T>(key: string, value: T, ttlSeconds: number): Promise<void>
  writeIfAbsent<T>(key: string, value: T, ttlSeconds: number): Promise<boolean>
  take<T>(key: string, schema: RecordSchema<T>): Promise<T | null>
  /** Atomic counter: adds `by` (default 1) and returns the new value; see {@link StoreBackend.incr}. */
  incr(key: string, ttlSeconds: number, by?: number): Promise<number>
  /** Current value of a counter (0 when absent). */
  count(key: string): Promise<number>
  /** Seconds left before a live record expires, or null when there is none. */
  ttl(key: string): Promise<number | null>
  remove(key: string): Promise<void>
}

/** Why a stored value was ignored. */
export type InvalidRecordReason = 'undecryptable' | 'not_json' | 'wrong_shape'

export interface RecordStoreOptions {
  onSweepError?: (error: unknown) => void
  /** Called for every stored value that is ignored (its namespace only: keys are never logged). */
  onInvalid?: (namespace: string, reason: InvalidRecordReason) => void
}

export function createRecordStore(backend: StoreBackend, prefix: string, hasher: KeyHasher, sealer: Sealer, options: RecordStoreOptions = {}): RecordStore {
  let lastSweep = Date.now()
  const namespaceOf = (key: string): string => {
    const rest = key.startsWith(prefix) ? key.slice(prefix.length) : key
    return rest.slice(0, Math.max(0, rest.indexOf(':'))) || 'unknown'
  }
  const invalid = (key: string, reason: InvalidRecordReason): null => {
    options.onInvalid?.(namespaceOf(key), reason)
    return null
  }
  const decode = <T>(key: string, raw: string | null, schema: RecordSchema<T>): T | null => {
    if (raw === null) return null
    const plain = sealer.open(raw)
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

  return {
    backend,
    key: (namespace, id) => `${prefix}${namespace}:${hasher.hash(namespace, id)}`,
    hash: (purpose, value) => hasher.hash(purpose, value),
    namespacePrefix: namespace => `${prefix}${namespace}:`,
    read: async (key, schema) => decode(key, await backend.get(key), schema),
    async write(key, value, ttlSeconds) {
      await backend.set(key, encode(value), ms(ttlSeconds))
      maybeSweep()
    },
    async writeIfAbsent(key, value, ttlSeconds) {
      const written = await backend.setIfAbsent(key, encode(value), ms(ttlSeconds))
      maybeSweep()
      return written
    },
    take: async (key, schema) => decode(key, await backend.take(key), schema),
    incr: (key, ttlSeconds, by = 1) => backend.incr(key, ms(ttlSeconds), by),
    async count(key) {
      const raw = await backend.get(key)
      const n = raw === null ? 0 : Number(raw)
      return Number.isSafeInteger(n) ? n : 0
    },
    async ttl(key) {
      const left = await backend.ttl(key)
      return left === null ? null : left / 1000
    },
    remove: key => backend.del(key),
  }
}
