import { afterEach, describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { createKeyHasher, createSealer, plainSealer } from '../../src/runtime/server/lib/store/crypto'
import { createMemoryBackend } from '../../src/runtime/server/lib/store/memory'
import { RECORD_TYPES } from './helpers/record-types'
import { createRecordStore } from '../../src/runtime/server/lib/store/record-store'

afterEach(() => {
  vi.useRealTimers()
})

describe('record store expiry sweeping', () => {
  it('sweeps expired records lazily, at most every 10 minutes, after a write', async () => {
    const backend = createMemoryBackend()
    const sweep = vi.spyOn(backend, 'sweep')
    const store = createRecordStore(backend, 'refresh:', [createKeyHasher('s'.repeat(40))], plainSealer)
    vi.useFakeTimers({ now: Date.now(), toFake: ['Date'] })

    await store.write(store.key(RECORD_TYPES.authCode, 'a'), { v: 1 }, 1)
    expect(sweep).not.toHaveBeenCalled()

    vi.setSystemTime(Date.now() + 11 * 60 * 1000)
    await store.write(store.key(RECORD_TYPES.authCode, 'b'), { v: 2 }, 60)
    expect(sweep).toHaveBeenCalledTimes(1)
    await sweep.mock.results[0]!.value
    // The expired record is gone from the backend, not merely hidden on read.
    expect(await backend.keys('refresh:')).toEqual([store.key(RECORD_TYPES.authCode, 'b').current])

    await store.write(store.key(RECORD_TYPES.authCode, 'c'), { v: 3 }, 60)
    expect(sweep).toHaveBeenCalledTimes(1)
  })

  it('reports a failing sweep without failing the write', async () => {
    const backend = createMemoryBackend()
    vi.spyOn(backend, 'sweep').mockRejectedValue(new Error('disk gone'))
    const errors: unknown[] = []
    const store = createRecordStore(backend, 'refresh:', [createKeyHasher('s'.repeat(40))], plainSealer, { onSweepError: e => errors.push(e) })
    vi.useFakeTimers({ now: Date.now() + 11 * 60 * 1000, toFake: ['Date'] })
    await expect(store.write(store.key(RECORD_TYPES.authCode, 'x'), { v: 1 }, 60)).resolves.toBeUndefined()
    await new Promise(r => setImmediate(r))
    expect(errors).toHaveLength(1)
  })
})

describe('records that do not match their schema', () => {
  const schema = z.object({ family: z.string(), at: z.number() })

  it('are treated as absent and reported by namespace, never by key', async () => {
    const backend = createMemoryBackend()
    const reports: Array<[string, string]> = []
    const store = createRecordStore(backend, 'refresh:', [createKeyHasher('s'.repeat(40))], plainSealer, { onInvalid: (ns, reason) => reports.push([ns, reason]) })
    const key = store.key(RECORD_TYPES.refreshToken, 'token')
    for (const raw of ['{not json', '"a string"', '[1,2]', '{"family":42,"at":1}', '{"family":"f"}', 'null']) {
      await backend.set(key.current, raw, 60_000)
      expect(await store.read(key, schema), raw).toBeNull()
      await backend.set(key.current, raw, 60_000)
      expect(await store.take(key, schema), raw).toBeNull()
    }
    expect(reports).toHaveLength(12)
    expect(new Set(reports.map(([ns]) => ns))).toEqual(new Set(['rt']))
    expect(reports.map(([, reason]) => reason)).toContain('not_json')
    expect(reports.map(([, reason]) => reason)).toContain('wrong_shape')
    await store.write(key, { family: 'f', at: 1, extra: true }, 60)
    expect(await store.read(key, schema)).toEqual({ family: 'f', at: 1 })
  })

  it('a sealed record under another key is reported as undecryptable', async () => {
    const backend = createMemoryBackend()
    const reports: string[] = []
    const writer = createRecordStore(backend, 'refresh:', [createKeyHasher('s'.repeat(40))], createSealer('k'.repeat(32)))
    const reader = createRecordStore(backend, 'refresh:', [createKeyHasher('s'.repeat(40))], createSealer('x'.repeat(32)), { onInvalid: (_, reason) => reports.push(reason) })
    const key = writer.key(RECORD_TYPES.refreshToken, 'token')
    await writer.write(key, { family: 'f', at: 1 }, 60)
    expect(await reader.read(key, schema)).toBeNull()
    expect(reports).toEqual(['undecryptable'])
  })
})

describe('counters', () => {
  it('add a step, give units back, and never create a counter by giving back', async () => {
    const store = createRecordStore(createMemoryBackend(), 'refresh:', [createKeyHasher('s'.repeat(40))], plainSealer)
    const key = store.key(RECORD_TYPES.rateCounter, 'x')
    expect(await store.incr(key, 60, -1)).toBe(0)
    expect(await store.count(key)).toBe(0)
    expect(await store.ttl(key)).toBeNull()
    expect(await store.incr(key, 60)).toBe(1)
    expect(await store.incr(key, 60, 4)).toBe(5)
    expect(await store.incr(key, 60, -1)).toBe(4)
    expect(await store.count(key)).toBe(4)
    const ttl = await store.ttl(key)
    expect(ttl).toBeGreaterThan(58)
    expect(ttl).toBeLessThanOrEqual(60)
    await expect(store.incr(key, 60, 0)).rejects.toThrow(RangeError)
    await expect(store.incr(key, 60, 1.5)).rejects.toThrow(RangeError)
  })
})

describe('record types', () => {
  it('are the only namespaces a key can have', () => {
    const store = createRecordStore(createMemoryBackend(), 'refresh:', [createKeyHasher('s'.repeat(40))], plainSealer)
    // @ts-expect-error: a namespace no module declared (recordTypes) does not typecheck
    expect(store.key('not-a-record-type', 'x').current).toMatch(/^refresh:not-a-record-type:/)
    // @ts-expect-error: nor does a named structure outside the list
    expect(store.namedKey('elsewhere').current).toBe('refresh:elsewhere')
    expect(store.key(RECORD_TYPES.authCode, 'x').current).toMatch(/^refresh:code:[0-9a-f]{64}$/)
    expect(store.namedKey(RECORD_TYPES.revokedSessions).current).toBe('refresh:revoked-sessions')
  })

  it('name the record type of an invalid map entry stored under a named key', async () => {
    const backend = createMemoryBackend()
    const reports: string[] = []
    const store = createRecordStore(backend, 'refresh:', [createKeyHasher('s'.repeat(40))], plainSealer, { onInvalid: ns => reports.push(ns) })
    const key = store.namedKey(RECORD_TYPES.revokedSessions)
    await backend.mapSet(key.current, 'sid', '{bad', 60_000)
    expect(await store.mapEntries(key, z.number())).toEqual([])
    expect(reports).toEqual(['revoked-sessions'])
  })
})

describe('list', () => {
  it('gives the live entries of one record type only, sorted', async () => {
    vi.useFakeTimers({ now: Date.now(), toFake: ['Date'] })
    const store = createRecordStore(createMemoryBackend(), 'refresh:', [createKeyHasher('s'.repeat(40))], plainSealer)
    const a = store.key(RECORD_TYPES.magicPending, 'a')
    const b = store.key(RECORD_TYPES.magicPending, 'b')
    await store.write(a, { v: 1 }, 60)
    await store.write(b, { v: 2 }, 60)
    await store.write(store.key(RECORD_TYPES.magicPending, 'gone'), { v: 3 }, 1)
    // Namespaces that start like it are other record types.
    await store.write(store.key(RECORD_TYPES.magicByCode, 'a'), { v: 4 }, 60)
    await store.incr(store.key(RECORD_TYPES.magicAttempts, 'a'), 60)
    await store.mapSet(store.namedKey(RECORD_TYPES.revokedSessions), 'sid', 1, 60)
    vi.setSystemTime(Date.now() + 2000)

    expect(await store.list(RECORD_TYPES.magicPending)).toEqual([a.current, b.current].sort())
    expect(await store.list(RECORD_TYPES.magicByCode)).toHaveLength(1)
    expect(await store.list(RECORD_TYPES.magicAttempts)).toHaveLength(1)
    expect(await store.list(RECORD_TYPES.revokedSessions)).toEqual(['refresh:revoked-sessions:sid'])
    expect(await store.list(RECORD_TYPES.authCode)).toEqual([])
    const [first] = await store.list(RECORD_TYPES.magicPending)
    expect(await store.read(store.at(first!), z.object({ v: z.number() }))).not.toBeNull()
    expect(await store.ttl(store.at(first!))).toBeGreaterThan(50)
  })
})
