import { z } from 'zod'
import type { RecordStore } from '../../store/record-store'
import { CORE_RECORDS } from './core-records'

/** Sessions revoked lately (`sid` → when), loaded on start and reconnection, then followed through broadcasts. */

/** Channel of the revocation broadcasts (message: `<sid>|<expiry ms>`). */
export const REVOKED_CHANNEL = 'session-revoked'

const revokedAt = z.number()

/** Records that `sid` is revoked and tells every process; a failed broadcast is only reported. */
export async function storeRevokedSession(store: RecordStore, sid: string, expiresAt: number, onBroadcastError: (error: unknown) => void): Promise<void> {
  const now = Date.now()
  await store.mapSet(store.namedKey(CORE_RECORDS.revokedSessions), sid, now, (expiresAt - now) / 1000)
  await store.publish(REVOKED_CHANNEL, `${sid}|${expiresAt}`).catch(onBroadcastError)
}

/** Every session revoked and still within its access tokens' lifetime, with its expiry. */
export async function loadRevokedSessions(store: RecordStore): Promise<Array<{ sid: string, expiresAt: number }>> {
  const entries = await store.mapEntries(store.namedKey(CORE_RECORDS.revokedSessions), revokedAt)
  return entries.map(entry => ({ sid: entry.field, expiresAt: entry.expiresAt }))
}

/** Parses a broadcast message; null when malformed. */
export function parseRevokedMessage(message: string): { sid: string, expiresAt: number } | null {
  const bar = message.lastIndexOf('|')
  const sid = message.slice(0, bar)
  const expiresAt = Number(message.slice(bar + 1))
  return bar > 0 && Number.isFinite(expiresAt) ? { sid, expiresAt } : null
}
