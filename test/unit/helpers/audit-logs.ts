/**
 * Audit logs on the memory, fs, Redis and Upstash stores for the tests that run the same checks on each:
 * events to append, a log over a store place (helpers/record-stores.ts), and tampering with what a driver
 * stored, in its own form (the fs segment files, the Redis stream, the memory ring).
 */
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import type { AuditEvent } from '../../../src/runtime/audit/audit-types'
import { chainKeys, type ChainKey } from '../../../src/runtime/audit/server/audit-chain'
import { createAuditLog, type AuditLog, type AuditStorage } from '../../../src/runtime/audit/server/audit-log'
import { createAuditStorage } from '../../../src/runtime/audit/server/audit-recorder'
import { auditRedisKeys } from '../../../src/runtime/audit/server/audit-redis'
import type { StoreBackend } from '../../../src/runtime/server/lib/store'
import { testRedisUrl } from '../../support/test-redis'
import { openBackend, storePlace, type StoreDriver, type StorePlace } from './record-stores'

/** Secrets of the chain: the current one and a previous one. */
export const AUDIT_SECRETS = ['audit-chain-secret-current-0123456789-abcdef', 'audit-chain-secret-previous-0123456789-abcde'] as const
const TOKEN = { secret: 'audit-token-secret-0123456789-abcdefghijklmn', previousSecrets: [] }

/** The chain's keys for `secret` (and earlier secrets that still verify). */
export function auditKeys(secret: string = AUDIT_SECRETS[0], previousSecrets: readonly string[] = []): ChainKey[] {
  return chainKeys({ secret, previousSecrets }, TOKEN)
}

let made = 0

/** An event as the recorder makes them; `at` defaults to now. */
export function auditEvent(at: number = Date.now(), details: AuditEvent['details'] = {}): AuditEvent {
  const n = ++made
  return {
    id: `evt_${String(n).padStart(22, '0')}`,
    at: new Date(at).toISOString(),
    type: 'login',
    outcome: 'success',
    actor: `user_${n}`,
    subject: `user_${n}`,
    session: `ses_${n}`,
    client: { family: 'Firefox on Linux', addressPrefix: '192.0.2.0/24' },
    details: { provider: 'password', n, ...details },
  }
}

/** `count` events. */
export const auditEvents = (count: number, at?: number): AuditEvent[] => Array.from({ length: count }, () => auditEvent(at))

/** A log on one driver's store place: storages and logs over its backend, the stored lines, tampering. */
export interface AuditPlace {
  place: StorePlace
  backend: StoreBackend
  /** A new storage over the place (another instance of this process: its own queue and cache). */
  storage(maxEvents?: number): Promise<AuditStorage>
  /** A new log over a new storage, chaining under `keys[0]`. */
  log(keys?: readonly ChainKey[], maxEvents?: number): Promise<AuditLog>
  /**
   * Rewrites what the driver stored, oldest first, through `edit` (delete, change or swap lines); resolves the
   * log to verify (the memory store's ring is rewritten as a new one).
   */
  tamper(log: AuditLog, edit: (lines: string[]) => string[], keys?: readonly ChainKey[]): Promise<AuditLog>
  cleanup(): Promise<void>
}

/** Every stored line of a log, oldest first. */
export async function storedLines(log: AuditLog): Promise<string[]> {
  const lines: string[] = []
  for await (const event of log.oldest()) lines.push(JSON.stringify(event))
  return lines
}

/** A new place for an audit log on `driver` (a memory backend is shared by its storages). */
export async function auditPlace(driver: StoreDriver): Promise<AuditPlace> {
  const place = await storePlace(driver)
  const backend = await openBackend(place)
  const storage = (maxEvents = 1_000_000) => createAuditStorage(backend, place.prefix, maxEvents)
  // The memory store keeps the log in one storage of its process: every log of the place shares it.
  const memory = driver === 'memory' ? await storage() : undefined
  const limits = { retentionSeconds: 90 * 86400, maxEvents: 1_000_000 }
  const redis = driver === 'redis' || driver === 'upstash' ? new Redis(testRedisUrl()) : undefined

  async function rewrite(edit: (lines: string[]) => string[]): Promise<void> {
    if (driver === 'fs') {
      const dir = join(place.base, ...place.prefix.split(':').filter(Boolean), 'audit')
      const segments = (await readdir(dir)).filter(name => name.endsWith('.jsonl')).sort()
      const lines = (await Promise.all(segments.map(name => readFile(join(dir, name), 'utf8')))).join('').split('\n').slice(0, -1)
      // All of it in the oldest segment: order is what matters.
      await writeFile(join(dir, segments[0]!), edit(lines).map(line => `${line}\n`).join(''))
      for (const name of segments.slice(1)) await rm(join(dir, name))
      return
    }
    const { log } = auditRedisKeys(place.prefix)
    const entries = await redis!.xrange(log, '-', '+')
    const lines = edit(entries.map(([, fields]) => fields[1]!))
    await redis!.del(log)
    // The entries' own ids, in order (only the lines move), then ids after the last one.
    const [ms, seq] = (entries.at(-1)?.[0] ?? '1-0').split('-').map(Number) as [number, number]
    for (const [i, line] of lines.entries()) await redis!.xadd(log, entries[i]?.[0] ?? `${ms}-${seq + 1 + i - entries.length}`, 'e', line)
  }

  return {
    place,
    backend,
    storage: maxEvents => (memory && !maxEvents ? Promise.resolve(memory) : storage(maxEvents)),
    log: async (keys = auditKeys(), maxEvents) => createAuditLog(memory && !maxEvents ? memory : await storage(maxEvents), keys, limits),
    async tamper(log, edit, keys = auditKeys()) {
      if (driver !== 'memory') {
        await rewrite(edit)
        return log
      }
      const ring = await storage()
      const lines = edit(await storedLines(log))
      await ring.append(() => lines)
      return createAuditLog(ring, keys, limits)
    },
    async cleanup() {
      if (redis) {
        const keys = await redis.keys(`${place.prefix}*`)
        if (keys.length) await redis.del(...keys)
        await redis.quit()
      }
      await backend.dispose()
      await place.cleanup()
    },
  }
}
