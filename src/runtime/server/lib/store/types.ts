import type { StorageDriverName } from '../../../types/options'

/** Key/value backend of the record store: string values with a TTL; `take`, `setIfAbsent` and `incr` are atomic. */
export interface StoreBackend {
  readonly driver: StorageDriverName
  /** Value of a live entry, or null. */
  get(key: string): Promise<string | null>
  /** Write (or replace) an entry that expires after `ttlMs`. */
  set(key: string, value: string, ttlMs: number): Promise<void>
  /** Write only when no live entry exists. Resolves true when this call wrote it. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>
  /** Read and delete in one atomic step: of concurrent calls, only one gets the value. */
  take(key: string): Promise<string | null>
  /** Add `by` (default 1) and return the new value; TTL set on creation only; a negative `by` never creates one. */
  incr(key: string, ttlMs: number, by?: number): Promise<number>
  /** Remaining time to live of a live entry in ms, or null. */
  ttl(key: string): Promise<number | null>
  del(key: string): Promise<void>
  /** Keys of live entries that start with `prefix`. */
  keys(prefix: string): Promise<string[]>
  /** Map entries (`field` → value, each with its own expiry) under one key: never a scan of the store. */
  mapSet(key: string, field: string, value: string, ttlMs: number): Promise<void>
  /** Live entries of a map (expired ones are dropped on the way). */
  mapEntries(key: string): Promise<MapEntry[]>
  mapDelete(key: string, field: string): Promise<void>
  /** Broadcast to every process subscribed to `channel` (Redis pub/sub; a no-op elsewhere). */
  publish(channel: string, message: string): Promise<void>
  /** Receive the messages of `channel`; `onResync` runs when live and after every reconnection (messages lost). */
  subscribe(channel: string, onMessage: (message: string) => void, onResync: () => void, onError?: (error: Error) => void): Promise<() => Promise<void>>
  /** Claims a key and writes what the claim decides: see {@link Commit}. */
  commit(op: Commit): Promise<CommitResult>
  /** Remove expired entries (no-op where the driver expires entries itself). Returns how many. */
  sweep(): Promise<number>
  /** Close connections. */
  dispose(): Promise<void>
  /** The fs driver's root directory (absolute): structures of their own (the audit log) live below it. */
  readonly directory?: string
  /** The Redis drivers' scripts (EVALSHA, EVAL): structures of their own (the audit log) are kept by scripts. */
  readonly scripts?: ScriptClient
}

/** The commands a script runner needs (`runScript` in redis-scripts.ts). */
export interface ScriptClient {
  evalsha(sha: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>
}

/** A live entry of a map ({@link StoreBackend.mapEntries}). */
export interface MapEntry {
  field: string
  value: string
  /** Expiry time (epoch ms). */
  expiresAt: number
}

/** What a map field may be: 1–128 characters of `[A-Za-z0-9_-]`. */
export const MAP_FIELD = /^[\w-]{1,128}$/

/** Throws a TypeError for a map field outside {@link MAP_FIELD}. */
export function assertMapField(field: string): void {
  if (typeof field !== 'string' || !MAP_FIELD.test(field)) throw new TypeError(`Invalid map field ${JSON.stringify(field)}`)
}

/**
 * A live `guards` entry → `guarded`; a live `claim.key` or `taken` entry → `taken`; else exactly one
 * commit creates `claim.key` (`claimed`), writes `mapCopies` and `copies`, removes `deletes`. Where it
 * is not atomic (fs, Redis Cluster) a guard written meanwhile is missed: check the guard again.
 */
export interface Commit {
  guards: readonly string[]
  taken: readonly string[]
  claim: { key: string, value: string, ttlMs: number }
  copies: readonly string[]
  mapCopies: ReadonlyArray<{ key: string, field: string }>
  deletes: readonly string[]
}

/** How a {@link Commit} ended. */
export type CommitResult = 'claimed' | 'taken' | 'guarded'
