import type { Logger } from '../edge/logger'
import { loadRevokedSessions, parseRevokedMessage, REVOKED_CHANNEL, storeRevokedSession, storeStaleMark, type RevokedEntry } from './records/revoked-sessions'
import type { RecordStore } from '../store/record-store'

/**
 * In-process set of revoked session ids and of stale marks (a user's tokens issued before a time), stored
 * and broadcast; reloaded on start, reconnection and every `pollMs`.
 */
export interface RevocationList {
  isRevoked(sid: string): boolean
  /** True when any stale mark is held: only then does a check hash the user's id ({@link staleBefore}). */
  hasStaleMarks(): boolean
  /** The time (ms) before which the tokens of the user hashed as `id` are refused, or undefined. */
  staleBefore(id: string): number | undefined
  /** What to await before {@link isRevoked}: undefined when current; rejects before any reload succeeded (fail closed). */
  whenFresh(): Promise<void> | undefined
  /** How many revoked ids the process holds (expired ones are forgotten within a minute). */
  size(): number
  /** Revokes a session's access tokens on every process sharing the store (nothing when `sessions` is false). */
  revoke(sid: string): Promise<void>
  /** Refuses, on every process sharing the store, the tokens of the user hashed as `id` issued before `before` (ms). */
  markStale(id: string, before: number): Promise<void>
  dispose(): Promise<void>
}

export interface RevocationListOptions {
  /** Longest lifetime of an access token, in seconds: how long an id is kept. */
  ttlSeconds: number
  /** Reload from the store this often (ms) in addition to broadcasts; 0: never (expired ids are still forgotten every minute). */
  pollMs: number
  /** Load when a check needs the set, not on a timer (hosts that freeze between requests). @default false */
  onDemand?: boolean
  /** Revoke sessions' access tokens (`sessions.revokeAccessTokens`); false: stale marks only. @default true */
  sessions?: boolean
  logger: Pick<Logger, 'warn'>
}

const noop = () => {}

/** On demand, how long the last list is used after a failed reload (a store that is down is not asked per request). */
const RETRY_AFTER_FAILURE_MS = 250

/** How often a process without reloads (memory driver) forgets expired ids. */
const PRUNE_INTERVAL_MS = 60_000

/** Creates the list and loads the revocations stored so far before resolving (on demand: at the first check). */
export async function createRevocationList(store: RecordStore, options: RevocationListOptions): Promise<RevocationList> {
  const sessions = options.sessions ?? true
  const revoked = new Map<string, number>()
  /** Stale marks: hashed user → the latest `before` and when the mark expires. */
  const stale = new Map<string, { before: number, expiresAt: number }>()
  const add = ({ id, expiresAt, before }: RevokedEntry) => {
    if (expiresAt <= Date.now()) return
    if (before !== undefined) {
      const held = stale.get(id)
      stale.set(id, held ? { before: Math.max(before, held.before), expiresAt: Math.max(expiresAt, held.expiresAt) } : { before, expiresAt })
    }
    else if (sessions && (revoked.get(id) ?? 0) < expiresAt) revoked.set(id, expiresAt)
  }
  const prune = () => {
    const now = Date.now()
    for (const [sid, expiresAt] of revoked) if (expiresAt <= now) revoked.delete(sid)
    for (const [id, mark] of stale) if (mark.expiresAt <= now) stale.delete(id)
  }
  /** Whether a reload has succeeded yet (before, a check cannot be answered). */
  let loaded = false
  /** When the last successful reload started: the age of the list. */
  let loadedAt = Number.NEGATIVE_INFINITY
  /** When the last reload failed: checks wait {@link RETRY_AFTER_FAILURE_MS} before the next try. */
  let failedAt = Number.NEGATIVE_INFINITY
  const reload = async () => {
    const started = Date.now()
    try {
      for (const entry of await loadRevokedSessions(store)) add(entry)
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
   * One reload at a time, one more queued. Whoever sees a shared promise settle forgets it: on Workers
   * an ended request's handlers never run, and a stale promise would deadlock a resync.
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
    if (parsed) add(parsed)
  }, options.onDemand ? markStale : resyncInBackground, error => options.logger.warn('Lost the connection that receives session revocations; reconnecting (the revoked sessions are loaded again then)', error))
  // On demand, the first check loads the list: Workers refuse I/O outside a request.
  if (!options.onDemand) {
    if (first) await first
    else await resync()
  }

  // Reload on a timer (Redis too, as a safety net) and forget expired ids; on demand, checks do it.
  let timer: ReturnType<typeof setInterval> | undefined
  if (!options.onDemand) {
    timer = setInterval(options.pollMs > 0 ? resyncInBackground : prune, options.pollMs > 0 ? options.pollMs : PRUNE_INTERVAL_MS)
    timer.unref?.()
  }

  /** A reload a check waits for; until one has succeeded every check needs one (fails closed). */
  const fresh = (): Promise<void> | undefined => {
    if (!loaded) return running ? shared(running) : resync()
    const now = Date.now()
    // Fresh, or stale right after a failed try: the list as last loaded. Otherwise a reload.
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
    hasStaleMarks: () => stale.size > 0,
    staleBefore(id) {
      const mark = stale.get(id)
      if (mark === undefined) return undefined
      if (mark.expiresAt > Date.now()) return mark.before
      stale.delete(id)
      return undefined
    },
    whenFresh: () => (options.onDemand ? fresh() : undefined),
    size: () => revoked.size,
    async revoke(sid) {
      if (!sessions) return
      const expiresAt = Date.now() + options.ttlSeconds * 1000
      add({ id: sid, expiresAt })
      await storeRevokedSession(store, sid, expiresAt, error => options.logger.warn('Could not broadcast a session revocation (stored: other processes load it at their next reload)', error))
    },
    async markStale(id, before) {
      const expiresAt = Date.now() + options.ttlSeconds * 1000
      add({ id, expiresAt, before })
      await storeStaleMark(store, id, before, expiresAt, error => options.logger.warn('Could not broadcast a stale mark (stored: other processes load it at their next reload)', error))
    },
    async dispose() {
      if (timer) clearInterval(timer)
      await unsubscribe()
    },
  }
}
