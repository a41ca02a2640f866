import type { StorageDriverName } from '../../../types/options'

/**
 * Low-level key/value backend of the record store, built on the module's single unstorage mount.
 *
 * Values are opaque strings. Every write carries a time to live; an entry past its expiry is
 * never returned (expiry is checked on read, whatever the driver), and `sweep()` removes the
 * expired entries of drivers without native TTL.
 *
 * Atomicity: `take`, `setIfAbsent` and `incr` are atomic. With redis (and upstash, the same
 * commands over HTTP) they are single commands or scripts (GETDEL, SET NX PX, INCRBY + PEXPIRE),
 * so they hold across server processes. With
 * memory each is one synchronous step on the process's Map; with fs they are serialised by a
 * per-process lock per key, and fs `take` also uses rename()
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
  /**
   * Maps: entries (`field` → value), each with its own expiry, under one key. Redis keeps a map
   * in one hash (single-key commands, so it is safe on a cluster; the hash lives as long as its
   * longest entry); fs and memory keep one entry per field below `key:`. Reading a map costs
   * O(its entries), never a scan of the store. `field` is 1–128 characters of `[A-Za-z0-9_-]`.
   */
  mapSet(key: string, field: string, value: string, ttlMs: number): Promise<void>
  /** Live entries of a map (expired ones are dropped on the way). */
  mapEntries(key: string): Promise<MapEntry[]>
  mapDelete(key: string, field: string): Promise<void>
  /**
   * Broadcast `message` to every process subscribed to `channel` (Redis pub/sub). Drivers that
   * are not shared between processes have no one else to tell: a no-op.
   */
  publish(channel: string, message: string): Promise<void>
  /**
   * Receive the messages of `channel`. `onResync` runs once the subscription is live and again
   * after every reconnection (messages sent meanwhile are lost: reload the state they carry).
   * `onError` hears of the first error of each loss of the connection. Resolves with a function
   * that ends the subscription. upstash (HTTP) holds no connection: it runs `onResync` once and
   * receives nothing (its processes reload what the messages carry when they need it).
   */
  subscribe(channel: string, onMessage: (message: string) => void, onResync: () => void, onError?: (error: Error) => void): Promise<() => Promise<void>>
  /**
   * Claims a key and writes what the claim decides, in one step where the driver can: see
   * {@link Commit}. Redis (one server, also over HTTP) runs it as one script: one round trip, atomic. A Redis
   * cluster (the keys live on different slots) runs it as {@link commitInSteps}, memory as one
   * synchronous step (atomic within the process).
   */
  commit(op: Commit): Promise<CommitResult>
  /** Remove expired entries (no-op where the driver expires entries itself). Returns how many. */
  sweep(): Promise<number>
  /** Close connections. */
  dispose(): Promise<void>
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
 * A claim and what it decides (a refresh-token rotation: the rotated token's marker is the claim;
 * it carries the successor's record, so the successor's key and the session's map entry hold the
 * same value, and the rotated token is removed).
 *
 * 1. When a `guards` key holds a live entry, nothing is written: `guarded`.
 * 2. When `claim.key` or one of `taken` (the claim under other names) holds a live entry, the claim
 *    is someone else's: `taken`.
 * 3. Otherwise `claim.key` is created (atomically: of any number of concurrent commits of one
 *    claim, across processes where the driver is shared, exactly one resolves `claimed`); then the
 *    claim's value (and TTL) is stored in the map entries `mapCopies` and, after them, under
 *    `copies` (a copy is never there without its map entries), and `deletes` are removed.
 *    Nothing of a commit that is not won is written.
 *
 * Redis (one server) runs it as one script; fs creates one durable file and gives it the other
 * names as hard links; memory runs it as one synchronous step. Where it is not one atomic step (fs, a Redis Cluster), a guard
 * written between its read and the claim is not seen: what the commit stored must be refused by
 * the guard where it is used (a rotation's successor is refused by its session's revoked mark). A stop part-way (a crash) can leave a claim whose copies or deletions did
 * not all happen: the caller's records must read right then (the rotation marker carries the
 * successor's record, so a retry restores it).
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
