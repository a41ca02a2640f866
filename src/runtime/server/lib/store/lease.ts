/**
 * STUB on the org-auth branch, replaced by the merge of the org-store branch (where the cross-instance lease
 * is written): only its export signature, so that this branch compiles. It runs `fn` without any lock.
 */
import type { RecordKey, RecordStore } from './record-store'

/** Runs `fn` while holding the lease at `key` (stub: no lease is taken). */
export async function withLease<T>(_store: RecordStore, _key: RecordKey, fn: () => Promise<T>): Promise<T> {
  return fn()
}
