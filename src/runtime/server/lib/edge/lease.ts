import { z } from 'zod'
import { randomToken } from '../store/crypto'
import { createKeyedLock, type KeyedLock } from '../store/lock'
import type { RecordKey, RecordStore } from '../store/record-store'
import { authError } from './errors'

/** Options of {@link withLease}. */
export interface LeaseOptions {
  /**
   * How long the lease lasts when its holder never releases it (the process died), in seconds.
   * Longer than the work under it ever takes: once it lapses, another holder may start.
   * @default 10
   */
  leaseSeconds?: number
  /** How long to wait for the lease, in milliseconds, before giving up with 503 `busy`. @default 10000 */
  waitMs?: number
  /** Told when releasing the lease failed (the work is done; the lease lapses after `leaseSeconds`). @default ignored */
  onReleaseError?: (error: unknown) => void
}

const DEFAULT_LEASE_SECONDS = 10
const DEFAULT_WAIT_MS = 10_000
/** Backoff between attempts on the store: from about 2 ms, doubling, up to about 50 ms (each jittered). */
const FIRST_DELAY_MS = 2
const MAX_DELAY_MS = 50
/** What a 503 `busy` asks the client to wait, in seconds. */
const RETRY_AFTER_SECONDS = '1'

const leaseToken = z.string()

/** One local queue per store: waiters of one process line up here instead of polling the store. */
const localLocks = new WeakMap<RecordStore, KeyedLock>()

const busy = () => authError('busy', undefined, { 'retry-after': RETRY_AFTER_SECONDS })
const sleep = (ms: number) => new Promise<void>(resolve => setTimeout(resolve, ms))

/**
 * Runs `fn` while holding the lease at `key`: a lock shared by every process on the same store
 * (memory, fs, Redis with its cluster and sentinel set-ups, Redis over HTTP), so that the changes
 * of one thing (an organization) run one at a time across instances.
 *
 * Waiters of one process queue locally first; the one at the head claims the key with
 * `writeIfAbsent` (a random token, `leaseSeconds` to live) and retries with jittered backoff.
 * Past `waitMs` the call fails with 503 `busy` (`Retry-After: 1`) without running `fn`. The lease
 * is released after `fn`, whether it resolved or threw.
 *
 * A holder that dies blocks the others until its lease lapses. When `fn` outlasts the lease, another
 * holder may have claimed the key in the meantime: the release then puts that holder's lease back
 * with the time it had left. Between the release's `take` and that write a third caller can claim
 * the key, and two holders overlap: only a `fn` longer than its lease opens that window.
 * @param store The record store every instance shares.
 * @param key What the lease guards (e.g. `store.key(ORG_RECORDS.orgLock, orgId)`).
 * @param fn The work to run under the lease.
 * @param options Lease duration, waiting limit, release failures.
 * @returns What `fn` resolves to.
 */
export async function withLease<T>(store: RecordStore, key: RecordKey, fn: () => Promise<T>, options: LeaseOptions = {}): Promise<T> {
  const leaseSeconds = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS
  const waitMs = options.waitMs ?? DEFAULT_WAIT_MS
  if (!Number.isFinite(leaseSeconds) || leaseSeconds <= 0) throw new RangeError(`withLease: leaseSeconds must be a positive number, got ${leaseSeconds}`)
  if (!Number.isFinite(waitMs) || waitMs < 0) throw new RangeError(`withLease: waitMs must be 0 or more, got ${waitMs}`)
  const deadline = Date.now() + waitMs
  return inLocalQueue(localLock(store), key.current, deadline, async () => {
    const token = await acquire(store, key, leaseSeconds, deadline)
    try {
      return await fn()
    }
    finally {
      await release(store, key, token).catch(error => options.onReleaseError?.(error))
    }
  })
}

function localLock(store: RecordStore): KeyedLock {
  let lock = localLocks.get(store)
  if (!lock) {
    lock = createKeyedLock()
    localLocks.set(store, lock)
  }
  return lock
}

/** Runs `task` when it is the turn of `name` in `lock`, or fails with `busy` when the deadline comes first. */
function inLocalQueue<T>(lock: KeyedLock, name: string, deadline: number, task: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let state: 'queued' | 'running' | 'gave-up' = 'queued'
    const timer = setTimeout(() => {
      if (state !== 'queued') return
      state = 'gave-up'
      reject(busy())
    }, Math.max(0, deadline - Date.now()))
    void lock.run(name, async () => {
      // Its turn came after it gave up: the next waiter goes on at once.
      if (state === 'gave-up') return
      state = 'running'
      clearTimeout(timer)
      try {
        resolve(await task())
      }
      catch (error) {
        reject(error)
      }
    })
  })
}

/** Claims the key with a fresh token, retrying until the deadline; the token, or `busy`. */
async function acquire(store: RecordStore, key: RecordKey, leaseSeconds: number, deadline: number): Promise<string> {
  const token = randomToken(16)
  let delay = FIRST_DELAY_MS
  for (;;) {
    if (await store.writeIfAbsent(key, token, leaseSeconds)) return token
    const left = deadline - Date.now()
    if (left <= 0) throw busy()
    await sleep(Math.min(left, delay / 2 + Math.random() * delay / 2))
    delay = Math.min(delay * 2, MAX_DELAY_MS)
  }
}

/** Removes our lease; puts back another holder's that our `take` removed (ours had lapsed and it claimed the key). */
async function release(store: RecordStore, key: RecordKey, token: string): Promise<void> {
  const left = await store.ttl(key)
  const taken = await store.take(key, leaseToken)
  if (taken === null || taken === token || left === null) return
  await store.writeIfAbsent(key, taken, left)
}
