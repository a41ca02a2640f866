import type { KeyHasher, Sealer } from '../crypto'
import type { StoreBackend } from './types'

/** How often (at most) a process sweeps expired records of drivers without native TTL. */
const SWEEP_INTERVAL_MS = 10 * 60 * 1000

/**
 * Typed JSON records over the backend. Keys are `<prefix><namespace>:<hmac(id)>`, so storage never
 * holds a raw token or code; values are sealed (aes-256-gcm) when `sealer` encrypts.
 */
export interface RecordStore {
  readonly backend: StoreBackend
  key(namespace: string, id: string): string
  /** Prefix of every key of one namespace (for listing). */
  namespacePrefix(namespace: string): string
  read<T>(key: string): Promise<T | null>
  write<T>(key: string, value: T, ttlSeconds: number): Promise<void>
  writeIfAbsent<T>(key: string, value: T, ttlSeconds: number): Promise<boolean>
  take<T>(key: string): Promise<T | null>
  incr(key: string, ttlSeconds: number): Promise<number>
  remove(key: string): Promise<void>
}

export function createRecordStore(backend: StoreBackend, prefix: string, hasher: KeyHasher, sealer: Sealer, onSweepError?: (error: unknown) => void): RecordStore {
  let lastSweep = Date.now()
  const decode = <T>(raw: string | null): T | null => {
    if (raw === null) return null
    const plain = sealer.open(raw)
    if (plain === null) return null
    try {
      return JSON.parse(plain) as T
    }
    catch {
      return null
    }
  }
  const encode = (value: unknown) => sealer.seal(JSON.stringify(value))
  const maybeSweep = () => {
    if (Date.now() - lastSweep < SWEEP_INTERVAL_MS) return
    lastSweep = Date.now()
    backend.sweep().catch(error => onSweepError?.(error))
  }
  const ms = (seconds: number) => Math.max(1, Math.round(seconds * 1000))

  return {
    backend,
    key: (namespace, id) => `${prefix}${namespace}:${hasher.hash(namespace, id)}`,
    namespacePrefix: namespace => `${prefix}${namespace}:`,
    read: async key => decode(await backend.get(key)),
    async write(key, value, ttlSeconds) {
      await backend.set(key, encode(value), ms(ttlSeconds))
      maybeSweep()
    },
    async writeIfAbsent(key, value, ttlSeconds) {
      const written = await backend.setIfAbsent(key, encode(value), ms(ttlSeconds))
      maybeSweep()
      return written
    },
    take: async key => decode(await backend.take(key)),
    incr: (key, ttlSeconds) => backend.incr(key, ms(ttlSeconds)),
    remove: key => backend.del(key),
  }
}
