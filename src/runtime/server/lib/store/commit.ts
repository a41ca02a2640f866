import type { Commit, CommitResult, StoreBackend } from './types'

/** Resolves true when one of `keys` holds a live entry. */
async function anyLive(backend: Pick<StoreBackend, 'get'>, keys: readonly string[]): Promise<boolean> {
  const values = await Promise.all(keys.map(key => backend.get(key)))
  return values.some(value => value !== null)
}

/** The answer of a {@link Commit} blocked by a guard or an existing claim (losers write nothing), else null. */
export async function commitBlocked(backend: Pick<StoreBackend, 'get'>, op: Commit): Promise<CommitResult | null> {
  const [guarded, taken] = await Promise.all([anyLive(backend, op.guards), anyLive(backend, [...op.taken, op.claim.key])])
  return guarded ? 'guarded' : taken ? 'taken' : null
}

/** {@link Commit} from the backend's own atomic steps, for drivers that cannot run it as one script. */
export async function commitInSteps(backend: Pick<StoreBackend, 'get' | 'set' | 'setIfAbsent' | 'del' | 'mapSet'>, op: Commit): Promise<CommitResult> {
  const blocked = await commitBlocked(backend, op)
  if (blocked) return blocked
  const { key, value, ttlMs } = op.claim
  if (!(await backend.setIfAbsent(key, value, ttlMs))) return 'taken'
  await Promise.all(op.mapCopies.map(copy => backend.mapSet(copy.key, copy.field, value, ttlMs)))
  await Promise.all([...op.copies.map(copy => backend.set(copy, value, ttlMs)), ...op.deletes.map(k => backend.del(k))])
  return 'claimed'
}
