import { z } from 'zod'
import type { RecordStore } from '../../store/record-store'
import { CORE_RECORDS } from './core-records'

/**
 * Sessions revoked lately (`sid` → when) and stale marks (a user's hashed id → `{ before }`: that user's
 * access tokens issued before `before` are refused), loaded on start and reconnection, then followed
 * through broadcasts.
 */

/** Channel of the revocation broadcasts (message: `<sid>|<expiry ms>`, or `<hashed user>|<expiry ms>|<before ms>` for a mark). */
export const REVOKED_CHANNEL = 'session-revoked'

/** A stored entry: when the session was revoked (a number), or a stale mark. */
const revokedEntry = z.union([z.number(), z.strictObject({ before: z.number() })])

/** One entry of the list: a revoked session (`id` is its `sid`) or a stale mark (`id` is the hashed user, with `before`). */
export interface RevokedEntry {
  id: string
  expiresAt: number
  /** Only for a stale mark: tokens issued before this time (ms) are refused. */
  before?: number
}

/** Records that `sid` is revoked and tells every process; a failed broadcast is only reported. */
export async function storeRevokedSession(store: RecordStore, sid: string, expiresAt: number, onBroadcastError: (error: unknown) => void): Promise<void> {
  const now = Date.now()
  await store.mapSet(store.namedKey(CORE_RECORDS.revokedSessions), sid, now, (expiresAt - now) / 1000)
  await store.publish(REVOKED_CHANNEL, `${sid}|${expiresAt}`).catch(onBroadcastError)
}

/** Records a stale mark (`id`: the hashed user) and tells every process; a failed broadcast is only reported. */
export async function storeStaleMark(store: RecordStore, id: string, before: number, expiresAt: number, onBroadcastError: (error: unknown) => void): Promise<void> {
  await store.mapSet(store.namedKey(CORE_RECORDS.revokedSessions), id, { before }, (expiresAt - Date.now()) / 1000)
  await store.publish(REVOKED_CHANNEL, `${id}|${expiresAt}|${before}`).catch(onBroadcastError)
}

/** Every session revoked and every stale mark still within the access tokens' lifetime, with its expiry. */
export async function loadRevokedSessions(store: RecordStore): Promise<RevokedEntry[]> {
  const entries = await store.mapEntries(store.namedKey(CORE_RECORDS.revokedSessions), revokedEntry)
  return entries.map(entry => (typeof entry.value === 'number'
    ? { id: entry.field, expiresAt: entry.expiresAt }
    : { id: entry.field, expiresAt: entry.expiresAt, before: entry.value.before }))
}

/** Parses a broadcast message; null when malformed. */
export function parseRevokedMessage(message: string): RevokedEntry | null {
  const [id, expiry, before, ...rest] = message.split('|')
  const expiresAt = Number(expiry)
  if (!id || rest.length > 0 || !Number.isFinite(expiresAt)) return null
  if (before === undefined) return { id, expiresAt }
  const mark = Number(before)
  return before !== '' && Number.isFinite(mark) ? { id, expiresAt, before: mark } : null
}
