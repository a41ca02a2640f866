import type { StorageDriverName } from '../../../types/options'

/**
 * Low-level key/value backend of the record store, built on the module's single unstorage mount.
 *
 * Values are opaque strings. Every write carries a time to live; an entry past its expiry is
 * never returned (expiry is checked on read, whatever the driver), and `sweep()` removes the
 * expired entries of drivers without native TTL.
 *
 * Atomicity: `take`, `setIfAbsent` and `incr` are atomic. With redis they are single commands or
 * scripts (GETDEL, SET NX PX, INCRBY + PEXPIRE), so they hold across server processes. With
 * memory and fs they are serialised by a per-process lock per key; fs `take` also uses rename()
 * and fs `setIfAbsent` link(), which are atomic between processes on the same disk.
 */
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
  /**
   * Add `by` (default 1) to a counter atomically and return the new value (`by` for a new
   * counter). The TTL is set when the counter is created and not extended by later increments.
   * A negative `by` (giving back a reserved unit) never creates a counter: on an absent one it
   * does nothing and returns 0.
   */
  incr(key: string, ttlMs: number, by?: number): Promise<number>
  /** Remaining time to live of a live entry in ms, or null. */
  ttl(key: string): Promise<number | null>
  del(key: string): Promise<void>
  /** Keys of live entries that start with `prefix`. */
  keys(prefix: string): Promise<string[]>
  /** Remove expired entries (no-op where the driver expires entries itself). Returns how many. */
  sweep(): Promise<number>
  /** Close connections. */
  dispose(): Promise<void>
}
