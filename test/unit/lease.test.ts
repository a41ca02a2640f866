import { afterAll, describe, expect, it } from 'vitest'
import { withLease } from '../../src/runtime/server/lib/edge/lease'
import { authErrorCode } from '../../src/runtime/server/lib/edge/errors'
import { ORG_RECORDS } from '../../src/runtime/organizations/server/org-records'
import type { StoreBackend } from '../../src/runtime/server/lib/store'
import type { RecordStore } from '../../src/runtime/server/lib/store/record-store'
import { raceProcesses } from './helpers/race-processes'
import { openBackend, recordStoreOn, storePlace, STORE_DRIVERS, STORE_SECRETS, type StoreDriver, type StorePlace } from './helpers/record-stores'

const N = 50
const sleep = (ms: number) => new Promise<void>(resolve => setTimeout(resolve, ms))

/** What a lease call ended with: `busy` (the code of a 503), another error, or its value. */
async function outcome<T>(promise: Promise<T>): Promise<T | string> {
  try {
    return await promise
  }
  catch (error) {
    const code = authErrorCode(error)
    if (code) return `${code} ${(error as { statusCode: number }).statusCode}`
    throw error
  }
}

/** Several record stores on one place, as several processes would have (their own connections, their own local queues). */
async function storesOn(place: StorePlace, count: number, backends: StoreBackend[]): Promise<RecordStore[]> {
  // The memory driver lives in one process: its stores share one backend.
  const shared = place.driver === 'memory' ? await openBackend(place) : undefined
  const stores: RecordStore[] = []
  for (let i = 0; i < count; i++) {
    const backend = shared ?? await openBackend(place)
    if (!shared || i === 0) backends.push(backend)
    stores.push(recordStoreOn(backend, place))
  }
  return stores
}

describe.each(STORE_DRIVERS)('withLease on the %s driver', (driver: StoreDriver) => {
  const places: StorePlace[] = []
  const backends: StoreBackend[] = []
  afterAll(async () => {
    await Promise.all(backends.map(b => b.dispose()))
    await Promise.all(places.map(p => p.cleanup()))
  })
  const setup = async (count: number) => {
    const place = await storePlace(driver)
    places.push(place)
    const stores = await storesOn(place, count, backends)
    return { place, stores, key: stores[0]!.key(ORG_RECORDS.orgLock, 'org_test') }
  }

  it(`${N} concurrent holders of one key, over 5 stores of one place, never overlap and all run`, async () => {
    const { stores, key } = await setup(5)
    let holders = 0
    let most = 0
    const ran: number[] = []
    await Promise.all(Array.from({ length: N }, (_, i) => withLease(stores[i % 5]!, key, async () => {
      holders++
      most = Math.max(most, holders)
      await sleep(i % 3)
      holders--
      ran.push(i)
    }, { waitMs: 60_000 })))
    expect(most).toBe(1)
    expect(ran.sort((a, b) => a - b)).toEqual(Array.from({ length: N }, (_, i) => i))
    // Released: the next caller gets it at once.
    expect(await withLease(stores[0]!, key, async () => 'free', { waitMs: 0 })).toBe('free')
  })

  it('waiters of one process queue locally: one claim on the store each, no polling', async () => {
    const { stores, key } = await setup(1)
    const store = stores[0]!
    let claims = 0
    const counting: RecordStore = { ...store, writeIfAbsent: (...args) => {
      claims++
      return store.writeIfAbsent(...args)
    } }
    await Promise.all(Array.from({ length: N }, () => withLease(counting, key, () => sleep(1))))
    expect(claims).toBe(N)
  })

  it('holders of different keys run at the same time', async () => {
    const { stores } = await setup(1)
    const store = stores[0]!
    let holders = 0
    let most = 0
    await Promise.all(['a', 'b', 'c'].map(id => withLease(store, store.key(ORG_RECORDS.orgLock, id), async () => {
      holders++
      most = Math.max(most, holders)
      await sleep(30)
      holders--
    })))
    expect(most).toBe(3)
  })

  it('a holder that died blocks the others only until its lease lapses', async () => {
    const { stores, key } = await setup(1)
    // What a process leaves behind when it dies holding a lease of 0.4 s.
    expect(await stores[0]!.writeIfAbsent(key, 'lease-of-a-dead-process', 0.4)).toBe(true)
    const started = Date.now()
    expect(await withLease(stores[0]!, key, async () => Date.now() - started, { waitMs: 5000 })).toBeGreaterThanOrEqual(350)
    expect(Date.now() - started).toBeLessThan(1500)
  })

  it('gives up with 503 busy (Retry-After 1) after waitMs, on the store and in the local queue, without running fn', async () => {
    const { stores, key } = await setup(2)
    let release!: () => void
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let entered!: () => void
    const inside = new Promise<void>((resolve) => {
      entered = resolve
    })
    const holder = withLease(stores[0]!, key, async () => {
      entered()
      await held
      return 'holder done'
    })
    await inside
    let ran = 0
    const started = Date.now()
    // Another store (another process): it polls the store. The same store: it waits in the local queue.
    const [remote, local] = await Promise.all([
      outcome(withLease(stores[1]!, key, async () => ran++, { waitMs: 150 })),
      outcome(withLease(stores[0]!, key, async () => ran++, { waitMs: 150 })),
    ])
    const waited = Date.now() - started
    expect([remote, local]).toEqual(['busy 503', 'busy 503'])
    expect(waited).toBeGreaterThanOrEqual(140)
    expect(waited).toBeLessThan(1000)
    expect(ran).toBe(0)
    const error = await withLease(stores[1]!, key, async () => 0, { waitMs: 0 }).catch((e: unknown) => e)
    expect(error).toMatchObject({ statusCode: 503, data: { code: 'busy', headers: { 'retry-after': '1' } } })
    release()
    expect(await holder).toBe('holder done')
    // The waiter that gave up in the local queue does not hold up the next one.
    expect(await withLease(stores[0]!, key, async () => 'next', { waitMs: 1000 })).toBe('next')
  })

  it('releases the lease when fn throws, and passes the error on', async () => {
    const { stores, key } = await setup(2)
    await expect(withLease(stores[0]!, key, async () => {
      throw new Error('failed under the lease')
    })).rejects.toThrow('failed under the lease')
    expect(await withLease(stores[1]!, key, async () => 'after', { waitMs: 0 })).toBe('after')
  })

  it('a holder whose lease lapsed does not remove the lease of the one that took over', async () => {
    const { stores, key } = await setup(3)
    let releaseB!: () => void
    const bHolds = new Promise<void>((resolve) => {
      releaseB = resolve
    })
    let bEntered!: () => void
    const bInside = new Promise<void>((resolve) => {
      bEntered = resolve
    })
    // A holds a lease of 0.2 s for 0.5 s; B takes over once it lapsed and is still holding when A releases.
    const a = withLease(stores[0]!, key, () => sleep(500), { leaseSeconds: 0.2 })
    await sleep(20)
    const b = withLease(stores[1]!, key, async () => {
      bEntered()
      await bHolds
    }, { leaseSeconds: 5, waitMs: 5000 })
    await bInside
    await a
    // B's lease is still there: C cannot take it.
    expect(await outcome(withLease(stores[2]!, key, async () => 'overlap', { waitMs: 100 }))).toBe('busy 503')
    releaseB()
    await b
    expect(await withLease(stores[2]!, key, async () => 'free', { waitMs: 0 })).toBe('free')
  })

  it('refuses a lease time that is not positive and a negative wait', async () => {
    const { stores, key } = await setup(1)
    await expect(withLease(stores[0]!, key, async () => 0, { leaseSeconds: 0 })).rejects.toThrow(RangeError)
    await expect(withLease(stores[0]!, key, async () => 0, { waitMs: -1 })).rejects.toThrow(RangeError)
  })
})

interface RaceReport {
  type: 'done'
  pid: number
  intervals: Array<[number, number]>
  maxHolders: number
}

/** The child processes' place: the spec of test/unit/helpers/lease-race.mjs. */
const spec = (place: StorePlace, extra: Record<string, unknown>) => JSON.stringify({
  driver: place.driver, base: place.base, url: place.url, prefix: place.prefix,
  secret: STORE_SECRETS[0], sealKey: 'record-store-seal-key-0123456789-abcdefghij', lock: 'org_race', ...extra,
})

describe.each(['fs', 'redis'] as const)('withLease across processes on the %s driver', (driver) => {
  const places: StorePlace[] = []
  afterAll(() => Promise.all(places.map(p => p.cleanup())))

  it('4 processes × 20 holders (two connections each) never hold one lease at the same time', async () => {
    const place = await storePlace(driver)
    places.push(place)
    const reports = await raceProcesses<RaceReport>('lease-race.mjs', [spec(place, { mode: 'race', calls: 20, holdMs: 2 })], 4)
    expect(reports.map(r => r.maxHolders)).toEqual([1, 1, 1, 1])
    const intervals = reports.flatMap(r => r.intervals).sort((x, y) => x[0] - y[0])
    expect(intervals).toHaveLength(80)
    // Each holder started after the previous one ended (1 ms for the clocks of different processes).
    const overlaps = intervals.slice(1).filter(([start], i) => start < intervals[i]![1] - 1)
    expect(overlaps).toEqual([])
  }, 60_000)

  it('a process that dies holding the lease blocks the others only until its lease lapses', async () => {
    const place = await storePlace(driver)
    places.push(place)
    const [report] = await raceProcesses<{ type: 'holding', at: number }>('lease-race.mjs', [spec(place, { mode: 'die', leaseSeconds: 1 })], 1)
    const backend = await openBackend(place)
    try {
      const store = recordStoreOn(backend, place)
      const acquiredAt = await withLease(store, store.key(ORG_RECORDS.orgLock, 'org_race'), async () => Date.now(), { waitMs: 5000 })
      expect(acquiredAt - report!.at).toBeGreaterThanOrEqual(950)
      expect(acquiredAt - report!.at).toBeLessThan(2000)
    }
    finally {
      await backend.dispose()
    }
  }, 30_000)
})
