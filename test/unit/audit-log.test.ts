import { randomUUID } from 'node:crypto'
import { appendFile, readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import type { AuditEvent, ChainedAuditEvent } from '../../src/runtime/audit/audit-types'
import { linkEvents, type ChainHead } from '../../src/runtime/audit/server/audit-chain'
import { auditRedisKeys } from '../../src/runtime/audit/server/audit-redis'
import { createAuditLog, TRIM_INTERVAL_MS, type AuditLog } from '../../src/runtime/audit/server/audit-log'
import { auditLogOf, createAuditStorage } from '../../src/runtime/audit/server/audit-recorder'
import { createStoreBackend } from '../../src/runtime/server/lib/store'
import { resolveOptions } from '../../src/build/resolve-options'
import auditFeature from '../../src/runtime/audit/server/audit-feature'
import { createAuthContext } from '../../src/runtime/server/lib/core/context'
import { securityEvent } from '../../src/runtime/server/lib/edge/security-event'
import { fsAtomicDriver } from '../../src/runtime/server/lib/store/fs-driver'
import { startRedisCluster, type RedisNodeAddress, type RunningRedis } from '../support/redis-servers'
import { testRedisUrl } from '../support/test-redis'
import { AUDIT_SECRETS, auditEvent, auditEvents, auditKeys, auditPlace, storedLines, type AuditPlace } from './helpers/audit-logs'
import { STORE_DRIVERS } from './helpers/record-stores'

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))
const seqs = (events: readonly ChainedAuditEvent[]) => events.map(event => event.seq)
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

/** Every page of `newest`, newest first, and the cursors it gave. */
async function newestPages(log: AuditLog, count: number): Promise<{ pages: number[][], cursors: string[] }> {
  const pages: number[][] = []
  const cursors: string[] = []
  let cursor: string | undefined
  do {
    const page = await log.newest(cursor, count)
    pages.push(seqs(page.events))
    cursor = page.next
    if (cursor) cursors.push(cursor)
  } while (cursor && pages.length < 100)
  return { pages, cursors }
}

/** Seqs of every stored event, oldest first. */
async function allSeqs(log: AuditLog, since?: number): Promise<number[]> {
  const found: number[] = []
  for await (const event of log.oldest(since)) found.push(event.seq)
  return found
}

/** A line with one field of its event changed (the MAC left as it was). */
function edited(line: string, change: (event: ChainedAuditEvent) => void): string {
  const event = JSON.parse(line) as ChainedAuditEvent
  change(event)
  return JSON.stringify(event)
}

describe.each(STORE_DRIVERS)('the audit log on %s', (driver) => {
  let audit: AuditPlace
  beforeAll(async () => {
    audit = await auditPlace(driver)
  })
  afterAll(async () => {
    await audit?.cleanup()
  })
  /** A log of its own in the place (a fresh place per test keeps their logs apart). */
  async function freshLog(): Promise<{ audit: AuditPlace, log: AuditLog }> {
    const place = await auditPlace(driver)
    cleanups.push(() => place.cleanup())
    return { audit: place, log: await place.log() }
  }
  const cleanups: Array<() => Promise<void>> = []
  afterEach(async () => {
    await Promise.all(cleanups.splice(0).map(cleanup => cleanup()))
  })

  it('appends in order and pages newest first and oldest first with its cursors', async () => {
    const { audit, log } = await freshLog()
    for (const size of [1, 3, 5, 7, 9]) await log.append(auditEvents(size))
    const stored = await log.append(auditEvents(2))
    expect(seqs(stored)).toEqual([26, 27])

    const { pages, cursors } = await newestPages(log, 10)
    expect(pages).toEqual([range(18, 27).reverse(), range(8, 17).reverse(), range(1, 7).reverse()])
    expect(cursors).toHaveLength(2)
    expect(await allSeqs(log)).toEqual(range(1, 27))

    // The storage's own pages, oldest first: each cursor continues after the last line of its page.
    const storage = await audit.storage()
    const oldest: number[][] = []
    let cursor: string | undefined
    do {
      const page = await storage.oldest(0, cursor, 10)
      oldest.push(page.entries.map(entry => ('line' in entry ? (JSON.parse(entry.line) as ChainedAuditEvent).seq : -1)))
      cursor = page.next
    } while (cursor)
    expect(oldest).toEqual([range(1, 10), range(11, 20), range(21, 27)])
    // Another instance (another process's view) continues the same chain.
    const other = await audit.log()
    expect(seqs(await other.append(auditEvents(1)))).toEqual([28])
    expect(seqs((await log.newest(undefined, 2)).events)).toEqual([28, 27])
    expect(await log.verify()).toEqual({ ok: true, checked: 28 })
  })

  it('reads from a time: oldest(since) starts at the first event stored at or after it', async () => {
    const { log } = await freshLog()
    await log.append(auditEvents(4))
    await sleep(30)
    const since = Date.now()
    await sleep(30)
    await log.append(auditEvents(3))
    expect(await allSeqs(log, since)).toEqual([5, 6, 7])
    expect(await log.verify({ since })).toEqual({ ok: true, checked: 3 })
  })

  it('refuses malformed cursors with a TypeError, never reading elsewhere', async () => {
    const { audit, log } = await freshLog()
    await log.append(auditEvents(3))
    const storage = await audit.storage()
    for (const cursor of ['', 'x', '../../etc/passwd', '2026-01-01:../x', '1-2-3', '-1', '1e3', ' 1', '1-1\n', '9'.repeat(40), '2026-01-01:-4']) {
      await expect(storage.newest(cursor, 10), cursor).rejects.toThrow(TypeError)
      await expect(storage.oldest(0, cursor, 10), cursor).rejects.toThrow(TypeError)
    }
  })

  it('verifies an intact log, and finds a deleted event, an edited field and a swapped pair where they are', async () => {
    const { audit, log } = await freshLog()
    await log.append(auditEvents(4))
    await log.append(auditEvents(4))
    expect(await log.verify()).toEqual({ ok: true, checked: 8 })
    const lines = await storedLines(log)

    const gap = await audit.tamper(log, all => all.filter((_, i) => i !== 4))
    expect(await gap.verify()).toMatchObject({ ok: false, checked: 4, problem: { seq: 6, reason: 'gap' } })

    await audit.tamper(gap, () => lines)
    const changed = await audit.tamper(log, all => all.map((line, i) => (i === 2 ? edited(line, event => (event.outcome = 'failure')) : line)))
    expect(await changed.verify()).toMatchObject({ ok: false, checked: 2, problem: { seq: 3, reason: 'edited' } })

    // A detail further on, after the log was put back.
    const detail = await audit.tamper(log, () => lines.map((line, i) => (i === 6 ? edited(line, event => (event.details = { provider: 'oauth' })) : line)))
    expect(await detail.verify()).toMatchObject({ ok: false, problem: { seq: 7, reason: 'edited' } })

    const swapped = await audit.tamper(log, () => [...lines.slice(0, 5), lines[6]!, lines[5]!, lines[7]!])
    expect(await swapped.verify()).toMatchObject({ ok: false, checked: 5, problem: { seq: 7, reason: 'reordered' } })

    // Put back as it was, it verifies again.
    expect(await (await audit.tamper(log, () => lines)).verify()).toEqual({ ok: true, checked: 8 })
  })

  it('verifies events chained under a previous key; an unknown key is reported', async () => {
    const { audit } = await freshLog()
    const before = await audit.log(auditKeys(AUDIT_SECRETS[1]))
    await before.append(auditEvents(3))
    const rotated = await audit.log(auditKeys(AUDIT_SECRETS[0], [AUDIT_SECRETS[1]]))
    const after = await rotated.append(auditEvents(2))
    expect(seqs(after)).toEqual([4, 5])
    expect(new Set(after.map(event => event.kid))).toEqual(new Set([auditKeys()[0]!.kid]))
    expect(await rotated.verify()).toEqual({ ok: true, checked: 5 })
    const forgotten = await audit.log(auditKeys(AUDIT_SECRETS[0]))
    expect(await forgotten.verify()).toMatchObject({ ok: false, checked: 0, problem: { seq: 1, reason: 'unknown_key' } })
  })
})

describe('the audit feature records on the store it is given', () => {
  it.each(STORE_DRIVERS)('%s: a security event is stored beside the records under the prefix, and verifies', async (driver) => {
    const audit = await auditPlace(driver)
    const { place, backend } = audit
    const options = resolveOptions({
      token: { secret: 'audit-feature-secret-0123456789-abcdefghij' },
      tokenRefresh: { storage: { driver, base: place.base, url: place.url, token: place.token, prefix: place.prefix } },
      logging: { level: 'silent' },
      audit: {},
    }, true)
    const ctx = await createAuthContext(options, { backend, features: [auditFeature] })
    try {
      await securityEvent(ctx, undefined, { type: 'logout', actor: 'user_1', session: 'ses_1' })
      const log = await auditLogOf(ctx)
      const { events } = await log.newest(undefined, 10)
      expect(events).toMatchObject([{ seq: 1, type: 'logout', actor: 'user_1', subject: 'user_1', session: 'ses_1' }])
      expect(await log.verify()).toEqual({ ok: true, checked: 1 })
      if (driver === 'fs') {
        const dir = join(place.base, ...place.prefix.split(':').filter(Boolean), 'audit')
        expect(await readdir(dir)).toContain(`${events[0]!.at.slice(0, 10)}.jsonl`)
      }
      if (driver === 'redis' || driver === 'upstash') {
        const redis = new Redis(testRedisUrl())
        expect(await redis.xlen(auditRedisKeys(place.prefix).log)).toBe(1)
        await redis.quit()
      }
    }
    finally {
      await ctx.dispose()
      await audit.cleanup()
    }
  })
})

describe('audit log retention', () => {
  const cleanups: Array<() => Promise<void>> = []
  afterEach(async () => {
    vi.useRealTimers()
    await Promise.all(cleanups.splice(0).map(cleanup => cleanup()))
  })
  async function placeOn(driver: (typeof STORE_DRIVERS)[number]): Promise<AuditPlace> {
    const place = await auditPlace(driver)
    cleanups.push(() => place.cleanup())
    return place
  }

  it('memory: trims events older than the time and the oldest beyond maxEvents', async () => {
    const audit = await placeOn('memory')
    const storage = await audit.storage(100)
    const log = createAuditLog(storage, auditKeys(), { retentionSeconds: 3600, maxEvents: 100 })
    const now = Date.now()
    await log.append(auditEvents(5, now - 2 * 3600_000))
    await log.append(auditEvents(5, now))
    expect(await log.trim(now)).toBe(5)
    expect(await allSeqs(log)).toEqual(range(6, 10))
    expect(await storage.trim(0, 3)).toBe(2)
    expect(await allSeqs(log)).toEqual(range(8, 10))
    expect(await log.verify()).toEqual({ ok: true, checked: 3 })
  })

  it('applies retention by itself after an append, at most every 10 minutes of a process', async () => {
    const storage = await (await placeOn('memory')).storage(100)
    vi.useFakeTimers({ toFake: ['Date'] })
    const start = Date.now()
    const log = createAuditLog(storage, auditKeys(), { retentionSeconds: 60, maxEvents: 100 })
    await log.append(auditEvents(3))
    vi.setSystemTime(start + TRIM_INTERVAL_MS - 1000)
    await log.append(auditEvents(1))
    // Not due yet: the first three are older than the retention but stay.
    expect(await allSeqs(log)).toEqual(range(1, 4))
    vi.setSystemTime(start + TRIM_INTERVAL_MS + 1000)
    await log.append(auditEvents(1))
    // Due: the three older than a minute go; the one of a second ago stays.
    await vi.waitFor(async () => expect(await allSeqs(log)).toEqual([4, 5]))
    expect(await log.verify()).toEqual({ ok: true, checked: 2 })
  })

  it('fs: deletes whole days older than the time, and the oldest days while the newer hold maxEvents; the chain goes on', async () => {
    const audit = await placeOn('fs')
    const log = await audit.log()
    const day = 86400_000
    const today = Date.now()
    vi.useFakeTimers({ toFake: ['Date'] })
    for (const ago of [3, 2, 1]) {
      vi.setSystemTime(today - ago * day)
      await log.append(auditEvents(4))
    }
    vi.useRealTimers()
    await log.append(auditEvents(4))
    const dir = join(audit.place.base, ...audit.place.prefix.split(':').filter(Boolean), 'audit')
    const days = (ago: number) => new Date(today - ago * day).toISOString().slice(0, 10)
    expect((await readdir(dir)).filter(name => name.endsWith('.jsonl')).sort()).toEqual([3, 2, 1, 0].map(ago => `${days(ago)}.jsonl`))
    // Files 0600 in a folder 0700.
    expect((await stat(dir)).mode & 0o777).toBe(0o700)
    expect((await stat(join(dir, `${days(0)}.jsonl`))).mode & 0o777).toBe(0o600)

    const storage = await audit.storage()
    const startOfYesterday = Date.parse(`${days(1)}T00:00:00.000Z`)
    expect(await storage.trim(startOfYesterday, 1_000_000)).toBe(8)
    expect(await allSeqs(log)).toEqual(range(9, 16))
    // Today's 4 events alone do not hold 5: yesterday stays; they do hold 4: it goes.
    expect(await storage.trim(0, 5)).toBe(0)
    expect(await storage.trim(0, 4)).toBe(4)
    expect(await allSeqs(log)).toEqual(range(13, 16))
    expect(await log.verify()).toEqual({ ok: true, checked: 4 })

    // Everything older than tomorrow: no segment left, yet the next event carries on the chain.
    expect(await storage.trim(today + day, 1_000_000)).toBe(4)
    expect(await allSeqs(log)).toEqual([])
    const [next] = await (await audit.log()).append([auditEvent()])
    expect(next!.seq).toBe(17)
    expect(await log.verify()).toEqual({ ok: true, checked: 1 })
  })

  it.each(['redis', 'upstash'] as const)('%s: the stream keeps about maxEvents, and trim drops entries older than the time', async (driver) => {
    const audit = await placeOn(driver)
    const capped = await audit.log(auditKeys(), 100)
    for (let i = 0; i < 8; i++) await capped.append(auditEvents(50))
    const redis = new Redis(testRedisUrl())
    cleanups.push(async () => {
      await redis.quit()
    })
    const { log: stream } = auditRedisKeys(audit.place.prefix)
    const length = await redis.xlen(stream)
    // `MAXLEN ~`: whole nodes of the stream go, so a few more than maxEvents may stay.
    expect(length).toBeGreaterThanOrEqual(100)
    expect(length).toBeLessThan(200)
    const kept = await allSeqs(capped)
    expect(kept).toEqual(range(401 - length, 400))
    expect(await capped.verify()).toEqual({ ok: true, checked: length })

    await sleep(30)
    const cut = Date.now()
    await sleep(30)
    await capped.append(auditEvents(20))
    const before = await redis.xlen(stream)
    const storage = await audit.storage(100)
    const removed = await storage.trim(cut, 1_000_000)
    expect(removed).toBeGreaterThan(0)
    const left = await allSeqs(capped)
    expect(left.length).toBe(before - removed)
    expect(left.slice(-20)).toEqual(range(401, 420))
    expect(await capped.verify()).toEqual({ ok: true, checked: left.length })
  })
})

describe('audit log on fs: crash safety and the store beside it', () => {
  const cleanups: Array<() => Promise<void>> = []
  afterEach(async () => {
    await Promise.all(cleanups.splice(0).map(cleanup => cleanup()))
  })

  it('reports a torn last line as such (verify ok before it), never pages it, and cuts it off at the next append', async () => {
    const audit = await auditPlace('fs')
    cleanups.push(() => audit.cleanup())
    const log = await audit.log()
    await log.append(auditEvents(3))
    const dir = join(audit.place.base, ...audit.place.prefix.split(':').filter(Boolean), 'audit')
    const [segment] = (await readdir(dir)).filter(name => name.endsWith('.jsonl'))
    const file = join(dir, segment!)
    const intact = await readFile(file, 'utf8')
    // A crash mid-append: part of a line, no newline.
    await appendFile(file, '{"id":"evt_torn","at":"20')
    expect(await log.verify()).toEqual({ ok: true, checked: 3, tornTail: true })
    expect(seqs((await log.newest(undefined, 10)).events)).toEqual([3, 2, 1])
    // A fresh instance (no head cached) appends after the last complete event.
    const [next] = await (await audit.log()).append([auditEvent()])
    expect(next!.seq).toBe(4)
    expect((await readFile(file, 'utf8')).startsWith(intact)).toBe(true)
    expect(await log.verify()).toEqual({ ok: true, checked: 4 })
  })

  it('reads the head again when the newest segment is another file of the size this process left', async () => {
    const audit = await auditPlace('fs')
    cleanups.push(() => audit.cleanup())
    const [first, other] = [await audit.log(), await audit.log()]
    const at = Date.now()
    const padded = (pad: number) => ({ ...auditEvent(at), actor: 'user_x', subject: 'user_x', session: 'ses_x', details: { pad: 'x'.repeat(pad) } })
    await first.append([padded(100), padded(0)])
    const dir = join(audit.place.base, ...audit.place.prefix.split(':').filter(Boolean), 'audit')
    const file = join(dir, `${new Date().toISOString().slice(0, 10)}.jsonl`)
    const left = (await stat(file)).size
    // Another process trims everything, then appends events that fill a new file to the same size.
    expect(await (await audit.storage()).trim(Date.now() + 86400_000, 1_000_000)).toBe(2)
    const head = JSON.parse(await readFile(join(dir, 'head.json'), 'utf8')) as ChainHead
    const size = (events: AuditEvent[]) => linkEvents(auditKeys()[0]!, head, events).reduce((sum, event) => sum + Buffer.byteLength(JSON.stringify(event)) + 1, 0)
    const events = [padded(0), padded(0)]
    events[0] = { ...events[0]!, details: { pad: 'x'.repeat(left - size(events)) } }
    expect(seqs(await other.append(events))).toEqual([3, 4])
    expect((await stat(file)).size).toBe(left)
    expect(seqs(await first.append([auditEvent()]))).toEqual([5])
    expect(await first.verify()).toEqual({ ok: true, checked: 3 })
  })

  it('pages a log of many read chunks: lines across chunk borders, a line longer than a chunk, a long torn tail', async () => {
    const audit = await auditPlace('fs')
    cleanups.push(() => audit.cleanup())
    const log = await audit.log()
    // Lines of varied lengths (a border falls anywhere in one), and one of 150 kB.
    const sizes = Array.from({ length: 400 }, (_, i) => (i * 7919) % 1500)
    sizes[123] = 150_000
    for (let i = 0; i < sizes.length; i += 50) await log.append(sizes.slice(i, i + 50).map(pad => auditEvent(Date.now(), { pad: 'x'.repeat(pad) })))
    const all = range(1, 400)
    const { pages } = await newestPages(log, 7)
    expect(pages.flat()).toEqual([...all].reverse())
    expect(await allSeqs(log)).toEqual(all)
    const found: number[] = []
    for await (const event of log.oldest()) if (event.details.pad === 'x'.repeat(sizes[event.seq - 1]!)) found.push(event.seq)
    expect(found).toEqual(all)
    const dir = join(audit.place.base, ...audit.place.prefix.split(':').filter(Boolean), 'audit')
    const [segment] = (await readdir(dir)).filter(name => name.endsWith('.jsonl'))
    await appendFile(join(dir, segment!), `{"pad":"${'y'.repeat(200_000)}`)
    expect(await log.verify()).toEqual({ ok: true, checked: 400, tornTail: true })
    expect(seqs((await log.newest(undefined, 2)).events)).toEqual([400, 399])
    expect(seqs(await (await audit.log()).append([auditEvent()]))).toEqual([401])
    expect(await log.verify()).toEqual({ ok: true, checked: 401 })
  })

  it('refuses a cursor that points into a line', async () => {
    const audit = await auditPlace('fs')
    cleanups.push(() => audit.cleanup())
    const log = await audit.log()
    await log.append(auditEvents(3))
    const storage = await audit.storage()
    const { next } = await storage.oldest(0, undefined, 1)
    const [day, offset] = next!.split(':')
    expect((await storage.oldest(0, next, 10)).entries).toHaveLength(2)
    await expect(storage.oldest(0, `${day}:${Number(offset) - 1}`, 10)).rejects.toThrow(TypeError)
    await expect(storage.oldest(0, `${day}:${Number(offset) + 1}`, 10)).rejects.toThrow(TypeError)
  })

  it('keeps the segments out of the store: never listed as its keys (nor read by its sweep)', async () => {
    const audit = await auditPlace('fs')
    cleanups.push(() => audit.cleanup())
    const log = await audit.log()
    await log.append(auditEvents(3))
    const record = `${audit.place.prefix}rt:abc`
    await audit.backend.set(record, 'value', 60_000)
    const driver = fsAtomicDriver({ base: audit.place.base })
    expect(await driver.getKeys('', {})).toEqual([record.replace(/:$/, '')])
    expect(await audit.backend.sweep()).toBe(0)
    expect(await log.verify()).toEqual({ ok: true, checked: 3 })
  })
})

describe('audit log on Redis: one cluster slot', () => {
  /** The part of a key Redis Cluster hashes: the first non-empty `{…}`, else the key. */
  function hashTag(key: string): string {
    const open = key.indexOf('{')
    const close = open < 0 ? -1 : key.indexOf('}', open + 1)
    return close > open + 1 ? key.slice(open + 1, close) : key
  }

  it('names both keys with one hash tag under the prefix', () => {
    const keys = auditRedisKeys('app:refresh:')
    expect(keys).toEqual({ log: 'app:refresh:{audit}:log', head: 'app:refresh:{audit}:head' })
    expect(hashTag(keys.log)).toBe('audit')
    expect(hashTag(keys.head)).toBe('audit')
    const tagged = auditRedisKeys('tenant{7}:')
    expect(hashTag(tagged.log)).toBe(hashTag(tagged.head))
  })

  let cluster: (RunningRedis & { nodes: RedisNodeAddress[] }) | undefined
  afterAll(async () => {
    await cluster?.stop()
  })

  it('appends, pages and verifies on a Redis Cluster of 3 masters', async () => {
    cluster = await startRedisCluster({ size: 3 })
    const backend = await createStoreBackend({ driver: 'redis', cluster: cluster.nodes, base: '', url: '', host: '', port: 0, password: '', db: 0 })
    try {
      const prefix = `svc-auth-test:${randomUUID()}:`
      const logs = await Promise.all([0, 1].map(async () => createAuditLog(await createAuditStorage(backend, prefix, 1000), auditKeys(), { retentionSeconds: 3600, maxEvents: 1000 })))
      await Promise.all(Array.from({ length: 20 }, (_, i) => logs[i % 2]!.append(auditEvents(2))))
      expect(await allSeqs(logs[0]!)).toEqual(range(1, 40))
      expect(seqs((await logs[1]!.newest(undefined, 3)).events)).toEqual([40, 39, 38])
      expect(await logs[1]!.verify()).toEqual({ ok: true, checked: 40 })
    }
    finally {
      await backend.dispose()
    }
  }, 60_000)
})
