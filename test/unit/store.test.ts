import { randomBytes, randomUUID } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fs from 'node:fs'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { createStoreBackend } from '../../src/runtime/server/lib/store'
import type { StoreBackend, StoreBackendOptions } from '../../src/runtime/server/lib/store'
import type { Commit } from '../../src/runtime/server/lib/store/types'
import { hasDotSegment, normalizeKey } from 'unstorage'
import { assertStorageKey, decodeEnvelope, encodeEnvelope } from '../../src/runtime/server/lib/store/envelope'
import { createFsBackend } from '../../src/runtime/server/lib/store/fs'
import { takeFile } from '../../src/runtime/server/lib/store/fs-exclusive'
import { isTempFileName, keyToPath } from '../../src/runtime/server/lib/store/fs-files'
import { createKeyedLock } from '../../src/runtime/server/lib/store/lock'
import { escapeRedisGlob } from '../../src/runtime/server/lib/store/redis-operations'
import type { StorageDriverName } from '../../src/runtime/types/options'
import { startUpstashRestServer, type UpstashRestServer } from '../helpers/upstash-rest-server.mjs'
import { testRedisUrl } from '../support/test-redis'
import { raceProcesses } from './helpers/race-processes'

const CONNECTION = { url: '', host: '', port: 0, password: '', db: 0 }
const N = 50

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1)

function options(driver: StorageDriverName, base = '', rest?: UpstashRestServer): StoreBackendOptions {
  // The redis driver on the Redis the tests share (test/support/global-setup.ts).
  return { driver, base, ...CONNECTION, ...(driver === 'redis' ? { url: testRedisUrl() } : {}), ...(rest ? { url: rest.url, token: rest.token } : {}) }
}

/** All file paths below `dir`, recursively. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true })
  return entries.filter(entry => entry.isFile()).map(entry => join(entry.parentPath, entry.name))
}

interface Harness {
  /** Backend shared by the tests of the suite; rejects when it could not be reached. */
  backend(): Promise<StoreBackend>
  /** A separate, empty backend (same driver) that the caller disposes. */
  fresh(): Promise<StoreBackend>
}

/** Run the StoreBackend contract against one driver. */
function contract(driver: StorageDriverName): void {
  describe(`StoreBackend contract: ${driver}`, () => {
    const prefix = `svc-auth-test:${randomUUID()}:`
    const k = (name: string): string => `${prefix}${name}`
    const dirs: string[] = []
    let shared: StoreBackend | undefined
    let ready: Promise<StoreBackend> | undefined
    // upstash: a loopback server speaking the Upstash REST protocol in front of the local Redis.
    let rest: Promise<UpstashRestServer> | undefined

    const create = async (): Promise<StoreBackend> => {
      let base = ''
      if (driver === 'fs') {
        base = await mkdtemp(join(tmpdir(), 'svc-auth-store-'))
        dirs.push(base)
      }
      return createStoreBackend(options(driver, base, rest && await rest))
    }

    const harness: Harness = {
      backend: () => ready ?? Promise.reject(new Error(`${driver} backend was not created`)),
      fresh: create,
    }

    beforeAll(() => {
      if (driver === 'upstash') rest = startUpstashRestServer({ token: `rest-token-${randomUUID()}`, redis: testRedisUrl() })
      // Connect and probe once; when the backend (e.g. Redis) is unreachable, every test of the
      // suite awaits this promise and fails with the connection error instead of being skipped.
      ready = create().then(async (backend) => {
        shared = backend
        await backend.get(k('probe'))
        return backend
      })
      ready.catch(() => {})
    })

    afterAll(async () => {
      if (shared && await ready?.then(() => true, () => false)) {
        for (const key of await shared.keys(prefix)) await shared.del(key)
        expect(await shared.keys(prefix)).toEqual([])
      }
      await shared?.dispose()
      await Promise.all(dirs.map(dir => rm(dir, { recursive: true, force: true })))
      await (await rest?.catch(() => undefined))?.close()
    })

    it('reports its driver name', async () => {
      expect((await harness.backend()).driver).toBe(driver)
    })

    it('sets and gets a value; missing keys read null', async () => {
      const b = await harness.backend()
      await b.set(k('basic'), 'hello', 10_000)
      expect(await b.get(k('basic'))).toBe('hello')
      expect(await b.get(k('missing'))).toBeNull()
    })

    it('stores values verbatim', async () => {
      const b = await harness.backend()
      // Values that look like JSON, numbers or base64 come back as the same strings, never parsed.
      const values = ['', '123', '-0', '1e3', '0123', '9007199254740993', 'true', 'null', '"quoted"', '{"e":1,"v":"x"}', '{"a":1}', '[1,2]', 'OK', 'T0s=', 'base64:aGVsbG8=', ' spaced ', 'ünï 🔑\n"q"']
      for (const [i, value] of values.entries()) {
        await b.set(k(`verbatim:${i}`), value, 10_000)
        expect(await b.get(k(`verbatim:${i}`))).toBe(value)
        expect(await b.take(k(`verbatim:${i}`))).toBe(value)
        await b.mapSet(k('verbatim:map'), `f${String(i).padStart(2, '0')}`, value, 10_000)
      }
      expect((await b.mapEntries(k('verbatim:map'))).map(e => e.value)).toEqual(values)
    })

    it('overwrites an entry and its TTL', async () => {
      const b = await harness.backend()
      await b.set(k('overwrite'), 'one', 50)
      await b.set(k('overwrite'), 'two', 10_000)
      await sleep(120)
      expect(await b.get(k('overwrite'))).toBe('two')
    })

    it('checks expiry on read', async () => {
      const b = await harness.backend()
      await b.set(k('expiring'), 'soon gone', 50)
      expect(await b.get(k('expiring'))).toBe('soon gone')
      await sleep(120)
      expect(await b.get(k('expiring'))).toBeNull()
      expect(await b.take(k('expiring'))).toBeNull()
      expect(await b.ttl(k('expiring'))).toBeNull()
    })

    it('rejects a TTL that is not a positive number', async () => {
      const b = await harness.backend()
      await expect(b.set(k('bad-ttl'), 'v', 0)).rejects.toThrow(RangeError)
      await expect(b.setIfAbsent(k('bad-ttl'), 'v', -1)).rejects.toThrow(RangeError)
      await expect(b.incr(k('bad-ttl'), Number.NaN)).rejects.toThrow(RangeError)
      expect(await b.get(k('bad-ttl'))).toBeNull()
    })

    it('take returns the value once, then null', async () => {
      const b = await harness.backend()
      await b.set(k('take'), 'once', 10_000)
      expect(await b.take(k('take'))).toBe('once')
      expect(await b.take(k('take'))).toBeNull()
      expect(await b.get(k('take'))).toBeNull()
      expect(await b.take(k('take-missing'))).toBeNull()
    })

    it(`${N} concurrent takes of one key: exactly one gets the value`, async () => {
      const b = await harness.backend()
      await b.set(k('take-race'), 'prize', 10_000)
      const results = await Promise.all(range(N).map(() => b.take(k('take-race'))))
      expect(results.filter(value => value !== null)).toEqual(['prize'])
      expect(await b.get(k('take-race'))).toBeNull()
    })

    it(`${N} concurrent incr give 1..${N} exactly once each`, async () => {
      const b = await harness.backend()
      const results = await Promise.all(range(N).map(() => b.incr(k('counter'), 10_000)))
      expect([...results].sort((x, y) => x - y)).toEqual(range(N))
      expect(await b.get(k('counter'))).toBe(String(N))
      expect(await b.ttl(k('counter'))).toBeGreaterThan(0)
    })

    it('incr sets the TTL on creation and does not extend it', async () => {
      const b = await harness.backend()
      // Margins for a loaded machine: the second increment comes well inside the window, the read
      // well after its end.
      expect(await b.incr(k('window'), 1500)).toBe(1)
      await sleep(300)
      expect(await b.incr(k('window'), 1500)).toBe(2)
      const left = await b.ttl(k('window'))
      expect(left).toBeGreaterThan(0)
      expect(left).toBeLessThanOrEqual(1200)
      await sleep(1400)
      expect(await b.get(k('window'))).toBeNull()
      expect(await b.incr(k('window'), 1500)).toBe(1)
    })

    it('incr adds a step; giving back never creates a counter nor extends its TTL', async () => {
      const b = await harness.backend()
      expect(await b.incr(k('step'), 10_000, -1)).toBe(0)
      expect(await b.get(k('step'))).toBeNull()
      expect(await b.incr(k('step'), 2_000, 3)).toBe(3)
      await sleep(150)
      expect(await b.incr(k('step'), 10_000, -1)).toBe(2)
      expect(await b.ttl(k('step'))).toBeLessThanOrEqual(1_900)
      const reserved = await Promise.all(range(N).map(() => b.incr(k('reserve'), 10_000)))
      await Promise.all(reserved.map(() => b.incr(k('reserve'), 10_000, -1)))
      expect(await b.get(k('reserve'))).toBe('0')
    })

    it('incr rejects a value that is not an integer', async () => {
      const b = await harness.backend()
      await b.set(k('not-a-number'), 'abc', 10_000)
      await expect(b.incr(k('not-a-number'), 10_000)).rejects.toThrow()
      expect(await b.get(k('not-a-number'))).toBe('abc')
    })

    it(`${N} concurrent setIfAbsent: exactly one writes`, async () => {
      const b = await harness.backend()
      const results = await Promise.all(range(N).map(i => b.setIfAbsent(k('nx-race'), `v${i}`, 10_000)))
      expect(results.filter(Boolean)).toHaveLength(1)
      expect(await b.get(k('nx-race'))).toBe(`v${results.indexOf(true) + 1}`)
    })

    it('setIfAbsent fails on a live entry and succeeds again after expiry', async () => {
      const b = await harness.backend()
      expect(await b.setIfAbsent(k('nx'), 'first', 50)).toBe(true)
      expect(await b.setIfAbsent(k('nx'), 'second', 50)).toBe(false)
      expect(await b.get(k('nx'))).toBe('first')
      await sleep(120)
      expect(await b.setIfAbsent(k('nx'), 'third', 10_000)).toBe(true)
      expect(await b.get(k('nx'))).toBe('third')
    })

    describe('commit', () => {
      const op = (name: string, value: string, extra: Partial<Commit> = {}): Commit => ({
        guards: [k(`${name}:guard`)],
        taken: [k(`${name}:claim-before`)],
        claim: { key: k(`${name}:claim`), value, ttlMs: 60_000 },
        copies: [k(`${name}:copy:${value}`)],
        mapCopies: [{ key: k(`${name}:map`), field: 'session' }],
        deletes: [k(`${name}:old`)],
        ...extra,
      })

      it('claims: the claim, its copies and its map entries hold the value, the deletions are gone', async () => {
        const b = await harness.backend()
        await b.set(k('c1:old'), 'old', 60_000)
        await b.mapSet(k('c1:map'), 'other', 'kept', 60_000)
        await b.mapSet(k('c1:map'), 'session', 'before', 60_000)
        expect(await b.commit(op('c1', 'v'))).toBe('claimed')
        expect(await b.get(k('c1:claim'))).toBe('v')
        expect(await b.get(k('c1:copy:v'))).toBe('v')
        const left = await b.ttl(k('c1:copy:v'))
        expect(left).toBeGreaterThan(50_000)
        expect(left).toBeLessThanOrEqual(60_000)
        const entries = await b.mapEntries(k('c1:map'))
        expect(entries.map(e => [e.field, e.value])).toEqual([['other', 'kept'], ['session', 'v']])
        expect(entries[1]!.expiresAt).toBeGreaterThan(Date.now() + 50_000)
        expect(await b.get(k('c1:old'))).toBeNull()
      })

      it('a copy replaces what its key held', async () => {
        const b = await harness.backend()
        await b.set(k('c2:copy:v'), 'older', 60_000)
        expect(await b.commit(op('c2', 'v'))).toBe('claimed')
        expect(await b.get(k('c2:copy:v'))).toBe('v')
      })

      it('is taken when the claim, or one of its other names, exists: nothing written, nothing deleted', async () => {
        const b = await harness.backend()
        await b.set(k('c3:old'), 'old', 60_000)
        await b.set(k('c3:claim'), 'theirs', 60_000)
        expect(await b.commit(op('c3', 'v'))).toBe('taken')
        expect(await b.get(k('c3:claim'))).toBe('theirs')
        await b.set(k('c4:old'), 'old', 60_000)
        await b.set(k('c4:claim-before'), 'theirs', 60_000)
        expect(await b.commit(op('c4', 'v'))).toBe('taken')
        expect(await b.get(k('c4:claim'))).toBeNull()
        for (const name of ['c3', 'c4']) {
          expect(await b.get(k(`${name}:copy:v`))).toBeNull()
          expect(await b.mapEntries(k(`${name}:map`))).toEqual([])
          expect(await b.get(k(`${name}:old`))).toBe('old')
        }
      })

      it('is guarded when a guard exists: nothing written, nothing deleted', async () => {
        const b = await harness.backend()
        await b.set(k('c5:old'), 'old', 60_000)
        await b.set(k('c5:guard'), 'revoked', 60_000)
        expect(await b.commit(op('c5', 'v'))).toBe('guarded')
        expect(await b.get(k('c5:claim'))).toBeNull()
        expect(await b.get(k('c5:copy:v'))).toBeNull()
        expect(await b.mapEntries(k('c5:map'))).toEqual([])
        expect(await b.get(k('c5:old'))).toBe('old')
      })

      it('claims over an expired claim', async () => {
        const b = await harness.backend()
        await b.set(k('c6:claim'), 'expired', 50)
        await sleep(120)
        expect(await b.commit(op('c6', 'v'))).toBe('claimed')
        expect(await b.get(k('c6:claim'))).toBe('v')
      })

      it(`${N} concurrent commits of one claim: exactly one is claimed, only its copies exist`, async () => {
        const b = await harness.backend()
        await b.set(k('race:old'), 'old', 60_000)
        const values = range(N).map(i => `v${i}`)
        const results = await Promise.all(values.map(v => b.commit(op('race', v))))
        expect(results.filter(r => r === 'claimed')).toHaveLength(1)
        expect(results.filter(r => r === 'taken')).toHaveLength(N - 1)
        const winner = values[results.indexOf('claimed')]!
        expect(await b.get(k('race:claim'))).toBe(winner)
        const copies = await Promise.all(values.map(v => b.get(k(`race:copy:${v}`))))
        expect(copies.filter(c => c !== null)).toEqual([winner])
        expect((await b.mapEntries(k('race:map'))).map(e => e.value)).toEqual([winner])
        expect(await b.get(k('race:old'))).toBeNull()
      })
    })

    it('ttl reports the remaining time of live entries only', async () => {
      const b = await harness.backend()
      await b.set(k('ttl'), 'v', 10_000)
      const left = await b.ttl(k('ttl'))
      expect(left).toBeGreaterThan(9_000)
      expect(left).toBeLessThanOrEqual(10_000)
      expect(await b.ttl(k('ttl-missing'))).toBeNull()
    })

    it('del removes an entry; deleting a missing key is fine', async () => {
      const b = await harness.backend()
      await b.set(k('del'), 'v', 10_000)
      await b.del(k('del'))
      expect(await b.get(k('del'))).toBeNull()
      expect(await b.take(k('del'))).toBeNull()
      await expect(b.del(k('del-missing'))).resolves.toBeUndefined()
    })

    it('keys(prefix) lists only live keys with that prefix', async () => {
      const b = await harness.backend()
      await b.set(k('list:a'), '1', 10_000)
      await b.set(k('list:b:nested'), '2', 10_000)
      await b.set(k('list:gone'), '3', 50)
      await b.set(k('lister:c'), '4', 10_000)
      await b.set(k('other:d'), '5', 10_000)
      await sleep(120)
      expect(await b.keys(k('list:'))).toEqual([k('list:a'), k('list:b:nested')])
      expect(await b.keys(k('list'))).toEqual([k('list:a'), k('list:b:nested'), k('lister:c')])
      expect(await b.keys(k('nothing:'))).toEqual([])
    })

    it('keys(prefix) treats glob characters literally', async () => {
      const b = await harness.backend()
      await b.set(k('g*b:1'), '1', 10_000)
      await b.set(k('gxb:1'), '2', 10_000)
      await b.set(k('g[x]b:1'), '3', 10_000)
      expect(await b.keys(k('g*b:'))).toEqual([k('g*b:1')])
      expect(await b.keys(k('g[x]'))).toEqual([k('g[x]b:1')])
      expect(await b.keys(k('g?b'))).toEqual([])
    })

    it('sweep removes expired entries and returns how many', async () => {
      await harness.backend()
      const b = await harness.fresh()
      try {
        for (const i of range(3)) await b.set(k(`sweep:old${i}`), 'x', 50)
        await b.set(k('sweep:live'), 'y', 10_000)
        await sleep(120)
        // Redis expires entries itself, so there is nothing left to sweep.
        expect(await b.sweep()).toBe(driver === 'redis' || driver === 'upstash' ? 0 : 3)
        expect(await b.sweep()).toBe(0)
        expect(await b.keys(k('sweep:'))).toEqual([k('sweep:live')])
        expect(await b.get(k('sweep:live'))).toBe('y')
        await b.del(k('sweep:live'))
      }
      finally {
        await b.dispose()
      }
    })

    it('maps: entries with their own expiry under one key, listed without a scan, deleted one by one', async () => {
      const b = await harness.backend()
      const map = k('map:user1')
      expect(await b.mapEntries(map)).toEqual([])
      await b.mapSet(map, 'fam-a', 'A', 60_000)
      await b.mapSet(map, 'fam_b', 'B', 100)
      await b.mapSet(map, 'fam-a', 'A2', 60_000)
      const before = await b.mapEntries(map)
      expect(before.map(e => [e.field, e.value])).toEqual([['fam-a', 'A2'], ['fam_b', 'B']])
      expect(before[0]!.expiresAt).toBeGreaterThan(Date.now() + 50_000)
      await sleep(150)
      // The short entry expired; the map lives on with its longest entry.
      expect((await b.mapEntries(map)).map(e => e.field)).toEqual(['fam-a'])
      await b.mapDelete(map, 'fam-a')
      await b.mapDelete(map, 'fam-a')
      expect(await b.mapEntries(map)).toEqual([])
      await expect(b.mapSet(map, 'a:b', 'x', 1000)).rejects.toThrow(TypeError)
      await expect(b.mapSet(map, '', 'x', 1000)).rejects.toThrow(TypeError)
    })

    it('an entry written again while a listing drops it as expired is kept', async () => {
      const b = await harness.backend()
      const map = k('map:again')
      await b.mapSet(map, 'other', 'live', 60_000)
      await b.mapSet(map, 'fam', 'old', 50)
      await sleep(80)
      // The listing reads the expired entry first; the new write lands before the listing drops it.
      const [listed] = await Promise.all([b.mapEntries(map), b.mapSet(map, 'fam', 'new', 60_000)])
      expect(listed.map(e => e.value)).not.toContain('old')
      expect((await b.mapEntries(map)).map(e => [e.field, e.value])).toEqual([['fam', 'new'], ['other', 'live']])
    })

    it('50 concurrent map writes to one map all land', async () => {
      const b = await harness.backend()
      const map = k('map:many')
      await Promise.all(range(50).map(i => b.mapSet(map, `f${i}`, String(i), 60_000)))
      expect((await b.mapEntries(map)).length).toBe(50)
      await Promise.all(range(50).map(i => b.mapDelete(map, `f${i}`)))
    })

    it('subscribe: resyncs once it is live; a published message reaches subscribers of other connections', async () => {
      const b = await harness.backend()
      const other = await harness.fresh()
      const received: string[] = []
      let resyncs = 0
      const stop = await other.subscribe(k('chan'), message => received.push(message), () => resyncs++)
      try {
        expect(resyncs).toBe(1)
        await b.publish(k('chan'), 'hello')
        await b.publish(k('other-chan'), 'not for us')
        await sleep(200)
        // Only Redis is shared between connections; memory and fs have no one else to tell, and
        // over HTTP nothing is received (its publish reaches TCP subscribers: upstash.test.ts).
        expect(received).toEqual(driver === 'redis' ? ['hello'] : [])
      }
      finally {
        await stop()
        await other.dispose()
      }
    })
  })
}

contract('memory')
contract('fs')
contract('redis')
contract('upstash')

describe('createStoreBackend', () => {
  it('throws for an unknown driver, naming the allowed ones', async () => {
    const bad = { ...options('memory'), driver: 'mongo' } as unknown as StoreBackendOptions
    await expect(createStoreBackend(bad)).rejects.toThrow(/"mongo".*fs, memory, redis, upstash/)
  })
})

describe('memory and fs keys', () => {
  it.each(['memory', 'fs'] as const)('%s rejects keys unstorage would rewrite or that escape the base', async (driver) => {
    const base = await mkdtemp(join(tmpdir(), 'svc-auth-store-'))
    const b = await createStoreBackend(options(driver, base))
    try {
      for (const key of ['', 'a:..:b', '..', 'a/b', 'a::b', ':a', 'a:', 'a?b', 'meta$', 'a:.:b']) {
        await expect(b.set(key, 'v', 1_000), key).rejects.toThrow(/Invalid/)
        await expect(b.get(key), key).rejects.toThrow(/Invalid/)
      }
      if (driver === 'fs') expect(await listFiles(base)).toEqual([])
    }
    finally {
      await b.dispose()
      await rm(base, { recursive: true, force: true })
    }
  })
})

describe('assertStorageKey', () => {
  it('accepts exactly the keys unstorage keeps as they are (no rewrite, no `$` end, no dot segment)', () => {
    const alphabet = ['a', 'Z', '0', '_', '-', ':', '.', '/', '\\', '?', '$', ' ', 'é']
    let keys = ['']
    const all = ['']
    for (let length = 1; length <= 4; length++) {
      keys = keys.flatMap(key => alphabet.map(char => key + char))
      all.push(...keys)
    }
    for (const key of [...all, 'refresh:rt:0123abcdef', 'refresh:sessions:ab12:Fam-ily_1', 'svc.auth:rt:ab', 'a:b:']) {
      const kept = key !== '' && normalizeKey(key) === key && !key.endsWith('$') && !hasDotSegment(key)
      if (kept) expect(() => assertStorageKey(key), key).not.toThrow()
      else expect(() => assertStorageKey(key), key).toThrow(TypeError)
    }
  })
})

describe('fs backend files', () => {
  let base = ''
  let backend: StoreBackend | undefined
  const fs = (): StoreBackend => {
    if (!backend) throw new Error('fs backend was not created')
    return backend
  }

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'svc-auth-store-'))
    backend = createFsBackend({ base })
  })

  afterAll(async () => {
    await backend?.dispose()
    await rm(base, { recursive: true, force: true })
  })

  it('maps keys to nested files and rejects .. segments', async () => {
    expect(keyToPath(base, 'a:b:c')).toBe(join(base, 'a', 'b', 'c'))
    expect(keyToPath(base, 'a/b\\c')).toBe(join(base, 'a', 'b', 'c'))
    expect(() => keyToPath(base, 'a:..:b')).toThrow(/Invalid key/)
    expect(() => keyToPath(base, '..')).toThrow(/Invalid key/)
    expect(() => keyToPath(base, '')).toThrow(/Invalid key/)
    await fs().set('map:x:y', 'v', 10_000)
    const raw = await readFile(join(base, 'map', 'x', 'y'), 'utf8')
    expect(decodeEnvelope(raw)?.v).toBe('v')
  })

  it('leaves no temp files and only valid JSON envelopes after many concurrent writes', async () => {
    const b = fs()
    await Promise.all(range(300).map(async (i) => {
      const key = `bulk:k${i % 10}`
      if (i % 3 === 0) await b.set(key, `value-${i}`, 10_000)
      else if (i % 3 === 1) await b.setIfAbsent(`bulk:nx${i % 7}`, `nx-${i}`, 10_000)
      else await b.incr(`bulk:count${i % 5}`, 10_000)
    }))
    const files = await listFiles(join(base, 'bulk'))
    expect(files).toHaveLength(10 + 7 + 5)
    for (const file of files) {
      expect(file.endsWith('.tmp'), file).toBe(false)
      const data: unknown = JSON.parse(await readFile(file, 'utf8'))
      expect(data).toEqual({ e: expect.any(Number), v: expect.any(String) })
      expect((await stat(file)).mode & 0o777).toBe(0o600)
    }
    expect(await b.keys('bulk:count')).toEqual(range(5).map(i => `bulk:count${i - 1}`))
  })

  it('sweep deletes stale temp files but keeps fresh ones; keys() never lists them', async () => {
    const dir = join(base, 'tmpfiles')
    await mkdir(dir, { recursive: true })
    const stale = join(dir, `.entry.${randomBytes(16).toString('hex')}.tmp`)
    const fresh = join(dir, `.entry.${randomBytes(16).toString('hex')}.tmp`)
    await writeFile(stale, 'partial')
    await writeFile(fresh, 'partial')
    const old = new Date(Date.now() - 120_000)
    await utimes(stale, old, old)
    expect(isTempFileName(`.entry.${randomBytes(16).toString('hex')}.tmp`)).toBe(true)
    expect(await fs().keys('tmpfiles:')).toEqual([])
    await fs().sweep()
    expect(await readdir(dir)).toEqual([fresh.slice(dir.length + 1)])
  })

  it(`takeFile: of ${N} concurrent calls exactly one gets the file`, async () => {
    await fs().set('claim:one', 'payload', 10_000)
    const results = await Promise.all(range(N).map(() => takeFile(base, 'claim:one')))
    const winners = results.filter(value => value !== null)
    expect(winners).toHaveLength(1)
    expect(decodeEnvelope(winners[0])?.v).toBe('payload')
    expect(await readdir(join(base, 'claim'))).toEqual([])
  })

  it('take is atomic across processes', async () => {
    const keys = range(20).map(i => `race:key${i}`)
    for (const key of keys) await fs().set(key, `value-of-${key}`, 60_000)
    const reports = await raceProcesses<{ type: 'done', pid: number, taken: [string, string][] }>('take-race.mjs', [base, ...keys])

    const taken = reports.flatMap(report => report.taken)
    expect(taken.map(([key]) => key).sort()).toEqual([...keys].sort())
    for (const [key, raw] of taken) expect(decodeEnvelope(raw)?.v).toBe(`value-of-${key}`)
    expect(await readdir(join(base, 'race'))).toEqual([])
  })
})

describe('fs setIfAbsent across processes', () => {
  it('of 4 processes claiming the same 20 keys (some of them over expired entries), exactly one wins each', async () => {
    const base = await mkdtemp(join(tmpdir(), 'svc-auth-claim-'))
    try {
      const keys = range(20).map(i => `claim:key${i}`)
      const backend = createFsBackend({ base })
      // Half of the keys hold an expired entry, which a claim must replace.
      for (const key of keys.slice(0, 10)) await backend.set(key, 'stale', 1)
      await sleep(5)
      const reports = await raceProcesses<{ type: 'done', pid: number, won: string[] }>('claim-race.mjs', ['set', base, ...keys])
      const won = reports.flatMap(report => report.won.map(key => [key, report.pid] as const))
      expect(won.map(([key]) => key).sort()).toEqual([...keys].sort())
      for (const [key, pid] of won) expect(await backend.get(key)).toBe(`claimed-by-${pid}`)
      expect((await readdir(join(base, 'claim'))).filter(name => name.endsWith('.tmp'))).toEqual([])
    }
    finally {
      await rm(base, { recursive: true, force: true })
    }
  })
})

describe('memory commit', () => {
  it('checks every name before it writes: a commit with an invalid name throws and leaves the store as it was', async () => {
    const b = await createStoreBackend(options('memory'))
    try {
      await b.set('m:old', 'old', 60_000)
      const op: Commit = { guards: ['m:guard'], taken: [], claim: { key: 'm:claim', value: 'v', ttlMs: 60_000 }, copies: ['m:copy'], mapCopies: [{ key: 'm:map', field: 'f' }], deletes: ['m:old'] }
      await expect(b.commit({ ...op, copies: ['m:copy', 'm::bad'] })).rejects.toThrow(TypeError)
      await expect(b.commit({ ...op, mapCopies: [{ key: 'm:map', field: 'a:b' }] })).rejects.toThrow(TypeError)
      await expect(b.commit({ ...op, claim: { ...op.claim, ttlMs: 0 } })).rejects.toThrow(RangeError)
      expect(await b.keys('')).toEqual(['m:old'])
      expect(await b.commit(op)).toBe('claimed')
      expect(await b.keys('')).toEqual(['m:claim', 'm:copy', 'm:map:f'])
    }
    finally {
      await b.dispose()
    }
  })
})

describe('fs commit', () => {
  const commitOf = (name: string, value: string): Commit => ({
    guards: [`${name}:guard`],
    taken: [],
    claim: { key: `${name}:claim`, value, ttlMs: 60_000 },
    copies: [`${name}:copy`],
    mapCopies: [{ key: `${name}:map`, field: 'f' }],
    deletes: [`${name}:old`],
  })

  it('stores the claim and its copies as one file (hard links: one durable write), leaving no temp file', async () => {
    const base = await mkdtemp(join(tmpdir(), 'svc-auth-commit-'))
    try {
      const backend = createFsBackend({ base })
      await backend.mapSet('one:map', 'f', 'before', 60_000)
      expect(await backend.commit(commitOf('one', 'v'))).toBe('claimed')
      const inodes = await Promise.all(['one:claim', 'one:copy', 'one:map:f'].map(async key => (await stat(keyToPath(base, key))).ino))
      expect(new Set(inodes).size).toBe(1)
      expect((await listFiles(base)).filter(file => isTempFileName(file.split('/').pop()!))).toEqual([])
    }
    finally {
      await rm(base, { recursive: true, force: true })
    }
  })

  it('gives the map entry its name before the copy: a failure in between leaves no copy without its entry', async () => {
    const base = await mkdtemp(join(tmpdir(), 'svc-auth-commit-order-'))
    const rename = fs.renameSync
    const spy = vi.spyOn(fs, 'renameSync').mockImplementation((from, to) => {
      if (String(to).endsWith(join('map', 'f'))) throw Object.assign(new Error('disk full'), { code: 'ENOSPC' })
      return rename(from, to)
    })
    try {
      const backend = createFsBackend({ base })
      await expect(backend.commit(commitOf('three', 'v'))).rejects.toThrow('disk full')
      expect(await backend.get('three:claim')).toBe('v')
      expect(await backend.get('three:copy')).toBeNull()
    }
    finally {
      spy.mockRestore()
      await rm(base, { recursive: true, force: true })
    }
  })

  it.each([
    ['with hard links', 'commit'],
    ['without hard links, new files empty for 20 ms', 'commit-nolink'],
  ])('of 4 processes committing the same 20 claims (%s), exactly one wins each and only its copies exist', async (_name, mode) => {
    const base = await mkdtemp(join(tmpdir(), 'svc-auth-commit-race-'))
    try {
      const keys = range(20).map(i => `commit:key${i}`)
      const reports = await raceProcesses<{ type: 'done', pid: number, won: string[] }>('claim-race.mjs', [mode, base, ...keys])
      const won = reports.flatMap(report => report.won.map(key => [key, report.pid] as const))
      expect(won.map(([key]) => key).sort()).toEqual([...keys].sort())
      const backend = createFsBackend({ base })
      for (const [key, pid] of won) {
        expect(await backend.get(key)).toBe(`claimed-by-${pid}`)
        expect((await backend.mapEntries(`${key}-map`)).map(e => e.value)).toEqual([`claimed-by-${pid}`])
        for (const report of reports) expect(await backend.get(`${key}-copy:${report.pid}`)).toBe(report.pid === pid ? `claimed-by-${pid}` : null)
      }
      expect((await listFiles(base)).filter(file => isTempFileName(file.split('/').pop()!))).toEqual([])
    }
    finally {
      await rm(base, { recursive: true, force: true })
    }
  })

  it('without hard links, writes each copy on its own', async () => {
    const base = await mkdtemp(join(tmpdir(), 'svc-auth-commit-nolink-'))
    const link = vi.spyOn(fs, 'linkSync').mockImplementation(() => {
      throw Object.assign(new Error('link not supported'), { code: 'EPERM' })
    })
    try {
      const backend = createFsBackend({ base })
      await backend.set('two:old', 'old', 60_000)
      const results = await Promise.all(range(N).map(i => backend.commit(commitOf('two', `v${i}`))))
      expect(results.filter(r => r === 'claimed')).toHaveLength(1)
      const winner = await backend.get('two:claim')
      expect(winner).toMatch(/^v\d+$/)
      expect(await backend.get('two:copy')).toBe(winner)
      expect((await backend.mapEntries('two:map')).map(e => e.value)).toEqual([winner])
      expect(await backend.get('two:old')).toBeNull()
      expect(link).toHaveBeenCalled()
      expect((await listFiles(base)).filter(file => isTempFileName(file.split('/').pop()!))).toEqual([])
    }
    finally {
      link.mockRestore()
      await rm(base, { recursive: true, force: true })
    }
  })
})

describe('fs setIfAbsent without hard links', () => {
  it('falls back to an exclusive create when link() is not supported, still one winner', async () => {
    const base = await mkdtemp(join(tmpdir(), 'svc-auth-nolink-'))
    const link = vi.spyOn(fs, 'linkSync').mockImplementation(() => {
      throw Object.assign(new Error('link not supported'), { code: 'EPERM' })
    })
    try {
      const backend = createFsBackend({ base })
      const results = await Promise.all(range(N).map(i => backend.setIfAbsent('nolink:key', `v${i}`, 60_000)))
      expect(results.filter(Boolean)).toHaveLength(1)
      expect(await backend.get('nolink:key')).toMatch(/^v\d+$/)
      await backend.set('nolink:stale', 'old', 1)
      await sleep(5)
      expect(await backend.setIfAbsent('nolink:stale', 'new', 60_000)).toBe(true)
      expect(await backend.get('nolink:stale')).toBe('new')
      expect(link).toHaveBeenCalled()
      expect((await readdir(join(base, 'nolink'))).filter(name => name.endsWith('.tmp'))).toEqual([])
    }
    finally {
      link.mockRestore()
      await rm(base, { recursive: true, force: true })
    }
  })
})

describe('fs lock files (replacing an expired entry, creating without hard links)', () => {
  const KEY = 'locked:key'
  let base = ''
  let lockFile = ''
  const tempFiles = async () => (await listFiles(base)).filter(file => isTempFileName(file.split('/').pop()!) && file !== lockFile)

  /** An fs backend whose `KEY` holds an expired entry: claiming it takes the key's lock file. */
  async function expiredEntry(): Promise<StoreBackend> {
    base = await mkdtemp(join(tmpdir(), 'svc-auth-lock-'))
    const path = keyToPath(base, KEY)
    lockFile = join(path, '..', `.key.${'0'.repeat(32)}.tmp`)
    const backend = createFsBackend({ base })
    await backend.set(KEY, 'expired', 1)
    await sleep(5)
    return backend
  }

  afterEach(async () => {
    vi.restoreAllMocks()
    await rm(base, { recursive: true, force: true })
  })

  it('a lock released between the failed open and the look at it is taken anew, never moved aside', async () => {
    const backend = await expiredEntry()
    await writeFile(lockFile, 'first holder')
    const realStat = fs.promises.stat
    let swapped = false
    vi.spyOn(fs.promises, 'stat').mockImplementation(async (...args: Parameters<typeof realStat>) => {
      if (!swapped && String(args[0]) === lockFile) {
        swapped = true
        // Meanwhile the holder releases the lock and another process takes it.
        await rm(lockFile)
        await writeFile(lockFile, 'second holder')
        throw Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT' })
      }
      return realStat(...args)
    })
    expect(await backend.setIfAbsent(KEY, 'mine', 60_000)).toBe(false)
    expect(swapped).toBe(true)
    // The second holder's lock is where it was: not renamed to a temp file, not removed.
    expect(await readFile(lockFile, 'utf8')).toBe('second holder')
    expect(await tempFiles()).toEqual([])
  })

  it('a stale lock (its holder died) is broken and deleted: the claim goes through, no temp file is left', async () => {
    const backend = await expiredEntry()
    await writeFile(lockFile, 'dead holder')
    const old = new Date(Date.now() - 60_000)
    await utimes(lockFile, old, old)
    expect(await backend.setIfAbsent(KEY, 'mine', 60_000)).toBe(true)
    expect(await backend.get(KEY)).toBe('mine')
    expect(await listFiles(base)).toEqual([keyToPath(base, KEY)])
  })

  it('a stale lock that another process broke and took again just before the rename is put back: busy', async () => {
    const backend = await expiredEntry()
    await writeFile(lockFile, 'dead holder')
    const old = new Date(Date.now() - 60_000)
    await utimes(lockFile, old, old)
    const realRename = fs.promises.rename
    let swapped = false
    vi.spyOn(fs.promises, 'rename').mockImplementation(async (...args: Parameters<typeof realRename>) => {
      if (!swapped && String(args[0]) === lockFile) {
        swapped = true
        await rm(lockFile)
        await writeFile(lockFile, 'fresh holder')
      }
      return realRename(...args)
    })
    expect(await backend.setIfAbsent(KEY, 'mine', 60_000)).toBe(false)
    expect(swapped).toBe(true)
    expect(await readFile(lockFile, 'utf8')).toBe('fresh holder')
    expect(await tempFiles()).toEqual([])
  })
})

describe('createKeyedLock', () => {
  it('runs tasks of one key in order and removes drained keys', async () => {
    const lock = createKeyedLock()
    const order: string[] = []
    const task = (name: string, ms: number) => async (): Promise<string> => {
      order.push(`start ${name}`)
      await sleep(ms)
      order.push(`end ${name}`)
      return name
    }
    const results = await Promise.all([
      lock.run('a', task('a1', 30)),
      lock.run('a', task('a2', 1)),
      lock.run('b', task('b1', 1)),
    ])
    expect(results).toEqual(['a1', 'a2', 'b1'])
    expect(order.indexOf('start a2')).toBeGreaterThan(order.indexOf('end a1'))
    expect(order.indexOf('end b1')).toBeLessThan(order.indexOf('end a1'))
    await sleep(0)
    expect(lock.size).toBe(0)
  })

  it('keeps going after a rejected task', async () => {
    const lock = createKeyedLock()
    const failed = lock.run('k', () => Promise.reject(new Error('boom')))
    const next = lock.run('k', async () => 'ok')
    await expect(failed).rejects.toThrow('boom')
    await expect(next).resolves.toBe('ok')
    await sleep(0)
    expect(lock.size).toBe(0)
  })
})

describe('envelope', () => {
  it('round-trips and rejects malformed data with null', () => {
    expect(decodeEnvelope(encodeEnvelope('v', 123))).toEqual({ e: 123, v: 'v' })
    expect(decodeEnvelope(new TextEncoder().encode(encodeEnvelope('x', 5)))).toEqual({ e: 5, v: 'x' })
    for (const bad of ['', 'not json', '{"e":"1","v":"x"}', '{"e":1,"v":2}', '{"v":"x"}', '[]', 'null', '42', null, undefined, 42, [1]]) {
      expect(decodeEnvelope(bad)).toBeNull()
    }
  })
})

describe('escapeRedisGlob', () => {
  it('escapes *, ?, [, ] and backslash', () => {
    expect(escapeRedisGlob('a*b?c[d]e\\f:')).toBe('a\\*b\\?c\\[d\\]e\\\\f:')
  })
})
