import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { createAuditLog, type AuditLog } from '../../src/runtime/audit/server/audit-log'
import { createAuditStorage } from '../../src/runtime/audit/server/audit-recorder'
import { deleteRedisKeys } from '../support/redis-servers'
import { auditEvent, auditKeys, AUDIT_SECRETS } from './helpers/audit-logs'
import { raceProcesses } from './helpers/race-processes'
import { openBackend, storePlace, type StoreDriver, type StorePlace } from './helpers/record-stores'

// Appends from several processes on one store: the fs directory shared (its lock file), the Redis
// server shared (the append script's compare-and-set), directly and behind the REST server.

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map(cleanup => cleanup()))
})

async function placeOn(driver: StoreDriver): Promise<StorePlace> {
  const place = await storePlace(driver)
  cleanups.push(async () => {
    if (driver !== 'fs') await deleteRedisKeys(place.prefix)
    await place.cleanup()
  })
  return place
}

/** A log over the place in this process. */
async function logOn(place: StorePlace): Promise<AuditLog> {
  const backend = await openBackend(place)
  cleanups.push(() => backend.dispose())
  return createAuditLog(await createAuditStorage(backend, place.prefix, 1_000_000), auditKeys(), { retentionSeconds: 3600, maxEvents: 1_000_000 })
}

const spec = (place: StorePlace, fields: Record<string, unknown>) => JSON.stringify({ driver: place.driver, base: place.base, url: place.url, token: place.token, prefix: place.prefix, secret: AUDIT_SECRETS[0], ...fields })

async function allSeqs(log: AuditLog): Promise<number[]> {
  const seqs: number[] = []
  for await (const event of log.oldest()) seqs.push(event.seq)
  return seqs
}

const oneTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1)

describe.each(['fs', 'redis', 'upstash'] as const)('the audit log on %s shared by 2 processes', (driver) => {
  it('50 concurrent appends in each: exactly 100 events, seq 1..100 without a gap, and the chain verifies', async () => {
    const place = await placeOn(driver)
    const reports = await raceProcesses<{ seqs: number[] }>('audit-append-race.mjs', [spec(place, { mode: 'race', count: 50 })], 2)
    expect(reports.flatMap(report => report.seqs).sort((a, b) => a - b)).toEqual(oneTo(100))
    const log = await logOn(place)
    expect(await allSeqs(log)).toEqual(oneTo(100))
    expect(await log.verify()).toEqual({ ok: true, checked: 100 })
  }, 60_000)
})

describe('the audit log on fs when its process is killed mid-append', () => {
  it('verifies up to the last complete event (every acknowledged one kept); the next append cuts a torn tail and goes on', async () => {
    const place = await placeOn('fs')
    const child = fork(fileURLToPath(new URL('./helpers/audit-append-race.mjs', import.meta.url)), [spec(place, { mode: 'loop', batch: 200 })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    let acknowledged = 0
    const exited = new Promise(resolve => child.once('exit', resolve))
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve())
      child.once('error', reject)
    })
    child.on('message', (message: { type: string, seq?: number }) => {
      if (message.type === 'appended') acknowledged = Math.max(acknowledged, message.seq!)
    })
    child.send({ startAt: Date.now() })
    // Killed while it appends: after a few appends, at a moment of its loop left to chance.
    while (acknowledged < 2000) await new Promise(resolve => setTimeout(resolve, 5))
    await new Promise(resolve => setTimeout(resolve, Math.random() * 20))
    child.kill('SIGKILL')
    await exited

    const log = await logOn(place)
    const verified = await log.verify()
    expect(verified).toMatchObject({ ok: true })
    expect(verified.checked).toBeGreaterThanOrEqual(acknowledged)
    // The lock the killed process held is broken once stale; the event links after the last complete one.
    const [next] = await log.append([auditEvent()])
    expect(next!.seq).toBe(verified.checked + 1)
    expect(await log.verify()).toEqual({ ok: true, checked: verified.checked + 1 })
  }, 60_000)
})
