import type { Logger } from '../edge/logger'
import { loadRevokedSessions, parseRevokedMessage, REVOKED_CHANNEL, storeRevokedSession } from './records/revoked-sessions'
import type { RecordStore } from '../store/record-store'

/**
 * The in-process set of revoked session ids. Access tokens name their session (`sid`); a token
 * of a session in this set is refused, so a token dies with its session instead of living until
 * it expires. Checking costs one lookup in memory: no store round trip per request.
 *
 * - Revoking adds the id here at once, stores it (for processes that start later) and broadcasts
 *   it (Redis pub/sub) to the other processes, which add it on receipt (within milliseconds).
 * - On start and after every reconnection the set is loaded from the store, so a broadcast missed
 *   while disconnected is caught up. Drivers without broadcasts reload it every `pollMs`; on
 *   hosts whose timers do not run between requests (`onDemand`: the upstash driver) a check waits
 *   for a reload when the set is older than `pollMs` ({@link RevocationList.whenFresh}).
 * - Ids are kept as long as an access token lives, then forgotten (the token has expired anyway).
 */
export interface RevocationList {
  isRevoked(sid: string): boolean
  /**
   * What to await before {@link isRevoked}: undefined when the set is current (broadcasts or a
   * timer keep it so, or with `onDemand` its last reload started less than `pollMs` ago), else a
   * reload (one at a time: concurrent checks share it). A failed reload is logged and the set as
   * last loaded is used, as when a timer's reload fails; before any reload succeeded, the promise
   * rejects with the failure (the check fails closed).
   */
  whenFresh(): Promise<void> | undefined
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
  /**
   * Load when a check needs the set (the first check, then any that finds it older than `pollMs`:
   * {@link RevocationList.whenFresh}) instead of at creation and on a timer, and start no timer:
   * for hosts that freeze between requests (serverless functions, Workers), where a timer does not
   * run, a subscription cannot be held and no I/O may happen outside a request.
   * @default false
   */
  onDemand?: boolean
  logger: Pick<Logger, 'warn'>
}

const noop = () => {}

/**
 * On demand, how long checks use the list as last loaded after a reload failed, before the next
 * check tries again (a store that is down is not asked once per request).
 */
const RETRY_AFTER_FAILURE_MS = 250

/** How often a process without reloads (memory driver) forgets expired ids. */
const PRUNE_INTERVAL_MS = 60_000

/** Creates the list and loads the revocations stored so far before resolving (on demand: at the first check). */
export async function createRevocationList(store: RecordStore, options: RevocationListOptions): Promise<RevocationList> {
  const revoked = new Map<string, number>()
  const add = (sid: string, expiresAt: number) => {
    if (expiresAt > Date.now() && (revoked.get(sid) ?? 0) < expiresAt) revoked.set(sid, expiresAt)
  }
  const prune = () => {
    const now = Date.now()
    for (const [sid, expiresAt] of revoked) if (expiresAt <= now) revoked.delete(sid)
  }
  /** Whether a reload has succeeded yet (before, a check cannot be answered). */
  let loaded = false
  /**
   * When the last successful reload started (its result holds what was stored by then): the age
   * of the list. A failed reload leaves it as it was, so the list is not taken as fresh.
   */
  let loadedAt = Number.NEGATIVE_INFINITY
  /** When the last reload failed: checks wait {@link RETRY_AFTER_FAILURE_MS} before the next try. */
  let failedAt = Number.NEGATIVE_INFINITY
  const reload = async () => {
    const started = Date.now()
    try {
      for (const { sid, expiresAt } of await loadRevokedSessions(store)) add(sid, expiresAt)
    }
    catch (error) {
      failedAt = Date.now()
      throw error
    }
    prune()
    loaded = true
    loadedAt = Math.max(loadedAt, started)
  }

  let first: Promise<void> | undefined
  /**
   * One reload at a time: a resync asked for while one runs makes one more reload after it (shared
   * by everyone who asks meanwhile), so reloads never pile up and none asked for is skipped.
   *
   * A shared promise is forgotten by whoever sees it settle, not only by the request that made it:
   * on Workers the handlers of a request that has ended (a client that went away) never run, and
   * its promises reject for every other request with "created by a request that has since ended".
   * Left in place, such a promise would answer every later check (a 500 before the first load, a
   * list never reloaded after it) or, queued behind, make a resync wait on itself forever.
   */
  let running: Promise<void> | undefined
  /** When the reload in flight started. */
  let runningSince = Number.NEGATIVE_INFINITY
  let queued: Promise<void> | undefined
  const forget = (promise: Promise<void>) => {
    if (running === promise) running = undefined
    if (queued === promise) queued = undefined
  }
  /** `promise`, forgotten by this caller once it has settled (either way). */
  const shared = (promise: Promise<void>): Promise<void> => promise.finally(() => forget(promise))
  const resync = (): Promise<void> => {
    if (running) {
      const before = running
      if (!queued) {
        const next: Promise<void> = before.then(noop, noop).then(() => {
          forget(before)
          forget(next)
          return resync()
        })
        queued = next
      }
      return shared(queued)
    }
    const started = reload()
    running = started
    runningSince = Date.now()
    first ??= started
    started.catch(error => options.logger.warn('Could not load the revoked sessions', error))
    return shared(started)
  }
  const resyncInBackground = () => {
    resync().catch(noop)
  }
  // On demand, a resync only marks the list stale: the next check reloads it.
  const markStale = () => {
    loadedAt = Number.NEGATIVE_INFINITY
  }
  // Subscribed before loading: a revocation between the two is received, not lost.
  const unsubscribe = await store.subscribe(REVOKED_CHANNEL, (message) => {
    const parsed = parseRevokedMessage(message)
    if (parsed) add(parsed.sid, parsed.expiresAt)
  }, options.onDemand ? markStale : resyncInBackground, error => options.logger.warn('Lost the connection that receives session revocations; reconnecting (the revoked sessions are loaded again then)', error))
  // On demand, the first check loads the list: no I/O before a request (Workers refuse it at
  // start-up, outside a request).
  if (!options.onDemand) {
    if (first) await first
    else await resync()
  }

  // Drivers without broadcasts (and Redis, as a safety net) reload; every driver forgets ids
  // whose access tokens have expired. On demand, checks reload (and prune) instead: no timer.
  let timer: ReturnType<typeof setInterval> | undefined
  if (!options.onDemand) {
    timer = setInterval(options.pollMs > 0 ? resyncInBackground : prune, options.pollMs > 0 ? options.pollMs : PRUNE_INTERVAL_MS)
    timer.unref?.()
  }

  /**
   * A reload that a check waits for. Until one has succeeded, every check needs one and fails with
   * it (as a process that cannot load the list at start does not start); after that, a failed
   * reload was logged and the set as last loaded is used.
   */
  const fresh = (): Promise<void> | undefined => {
    if (!loaded) return running ? shared(running) : resync()
    const now = Date.now()
    // Fresh: loaded less than pollMs ago. Stale, and the last try failed a moment ago: the list as
    // last loaded, without a try per check while the store is down. Otherwise: a reload.
    if (loadedAt > now - options.pollMs || failedAt > now - RETRY_AFTER_FAILURE_MS) return running ? shared(running).catch(noop) : undefined
    // A reload in flight that started within the interval will do: checks share it.
    if (running && runningSince > now - options.pollMs) return shared(running).catch(noop)
    return resync().catch(noop)
  }

  return {
    isRevoked(sid) {
      const expiresAt = revoked.get(sid)
      if (expiresAt === undefined) return false
      if (expiresAt > Date.now()) return true
      revoked.delete(sid)
      return false
    },
    whenFresh: () => (options.onDemand ? fresh() : undefined),
    size: () => revoked.size,
    async revoke(sid) {
      const expiresAt = Date.now() + options.ttlSeconds * 1000
      add(sid, expiresAt)
      await storeRevokedSession(store, sid, expiresAt, error => options.logger.warn('Could not broadcast a session revocation (stored: other processes load it at their next reload)', error))
    },
    async dispose() {
      if (timer) clearInterval(timer)
      await unsubscribe()
    },
  }
}
