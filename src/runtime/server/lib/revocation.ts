import type { Logger } from './logger'
import { loadRevokedSessions, parseRevokedMessage, REVOKED_CHANNEL, storeRevokedSession } from './records/revoked-sessions'
import type { RecordStore } from './store/record-store'

/**
 * The in-process set of revoked session ids. Access tokens name their session (`sid`); a token
 * of a session in this set is refused, so a token dies with its session instead of living until
 * it expires. Checking costs one lookup in memory: no store round trip per request.
 *
 * - Revoking adds the id here at once, stores it (for processes that start later) and broadcasts
 *   it (Redis pub/sub) to the other processes, which add it on receipt (within milliseconds).
 * - On start and after every reconnection the set is loaded from the store, so a broadcast missed
 *   while disconnected is caught up. Drivers without broadcasts reload it every `pollMs`.
 * - Ids are kept as long as an access token lives, then forgotten (the token has expired anyway).
 */
export interface RevocationList {
  isRevoked(sid: string): boolean
  /** How many revoked ids the process holds (expired ones are forgotten within a minute). */
  size(): number
  /** Revokes a session's access tokens on every process sharing the store. */
  revoke(sid: string): Promise<void>
  dispose(): Promise<void>
}

export interface RevocationListOptions {
  /** Longest lifetime of an access token, in seconds: how long an id is kept. */
  ttlSeconds: number
  /** Reload from the store this often (ms) in addition to broadcasts; 0: never (expired ids are still forgotten every minute). */
  pollMs: number
  logger: Pick<Logger, 'warn'>
}

/** How often a process without reloads (memory driver) forgets expired ids. */
const PRUNE_INTERVAL_MS = 60_000

/** Creates the list and loads the revocations stored so far before resolving. */
export async function createRevocationList(store: RecordStore, options: RevocationListOptions): Promise<RevocationList> {
  const revoked = new Map<string, number>()
  const add = (sid: string, expiresAt: number) => {
    if (expiresAt > Date.now() && (revoked.get(sid) ?? 0) < expiresAt) revoked.set(sid, expiresAt)
  }
  const prune = () => {
    const now = Date.now()
    for (const [sid, expiresAt] of revoked) if (expiresAt <= now) revoked.delete(sid)
  }
  const reload = async () => {
    for (const { sid, expiresAt } of await loadRevokedSessions(store)) add(sid, expiresAt)
    prune()
  }

  let first: Promise<void> | undefined
  /**
   * One reload at a time: a resync asked for while one runs (a poll, a reconnection) makes one
   * more reload after it, so reloads never pile up and none asked for is skipped.
   */
  let loading: Promise<void> | undefined
  let again = false
  const resync = () => {
    if (loading) {
      again = true
      return
    }
    loading = reload().finally(() => {
      loading = undefined
      if (again) {
        again = false
        resync()
      }
    })
    first ??= loading
    loading.catch(error => options.logger.warn('Could not load the revoked sessions', error))
  }
  // Subscribed before loading: a revocation between the two is received, not lost.
  const unsubscribe = await store.subscribe(REVOKED_CHANNEL, (message) => {
    const parsed = parseRevokedMessage(message)
    if (parsed) add(parsed.sid, parsed.expiresAt)
  }, resync, error => options.logger.warn('Lost the connection that receives session revocations; reconnecting (the revoked sessions are loaded again then)', error))
  if (first) await first
  else await reload()

  // Drivers without broadcasts (and Redis, as a safety net) reload; every driver forgets ids
  // whose access tokens have expired.
  const timer = setInterval(options.pollMs > 0 ? resync : prune, options.pollMs > 0 ? options.pollMs : PRUNE_INTERVAL_MS)
  timer.unref?.()

  return {
    isRevoked(sid) {
      const expiresAt = revoked.get(sid)
      if (expiresAt === undefined) return false
      if (expiresAt > Date.now()) return true
      revoked.delete(sid)
      return false
    },
    size: () => revoked.size,
    async revoke(sid) {
      const expiresAt = Date.now() + options.ttlSeconds * 1000
      add(sid, expiresAt)
      await storeRevokedSession(store, sid, expiresAt)
    },
    async dispose() {
      clearInterval(timer)
      await unsubscribe()
    },
  }
}
