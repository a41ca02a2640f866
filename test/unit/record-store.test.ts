import { afterEach, describe, expect, it, vi } from 'vitest'
import { createKeyHasher, plainSealer } from '../../src/runtime/server/lib/crypto'
import { createMemoryBackend } from '../../src/runtime/server/lib/store/memory'
import { createRecordStore } from '../../src/runtime/server/lib/store/record-store'

afterEach(() => {
  vi.useRealTimers()
})

describe('record store expiry sweeping', () => {
  it('sweeps expired records lazily, at most every 10 minutes, after a write', async () => {
    const backend = createMemoryBackend()
    const sweep = vi.spyOn(backend, 'sweep')
    const store = createRecordStore(backend, 'refresh:', createKeyHasher('s'.repeat(40)), plainSealer)
    vi.useFakeTimers({ now: Date.now(), toFake: ['Date'] })

    await store.write(store.key('code', 'a'), { v: 1 }, 1)
    expect(sweep).not.toHaveBeenCalled()

    vi.setSystemTime(Date.now() + 11 * 60 * 1000)
    await store.write(store.key('code', 'b'), { v: 2 }, 60)
    expect(sweep).toHaveBeenCalledTimes(1)
    await sweep.mock.results[0]!.value
    // The expired record is gone from the backend, not merely hidden on read.
    expect(await backend.keys('refresh:')).toEqual([store.key('code', 'b')])

    await store.write(store.key('code', 'c'), { v: 3 }, 60)
    expect(sweep).toHaveBeenCalledTimes(1)
  })

  it('reports a failing sweep without failing the write', async () => {
    const backend = createMemoryBackend()
    vi.spyOn(backend, 'sweep').mockRejectedValue(new Error('disk gone'))
    const errors: unknown[] = []
    const store = createRecordStore(backend, 'refresh:', createKeyHasher('s'.repeat(40)), plainSealer, e => errors.push(e))
    vi.useFakeTimers({ now: Date.now() + 11 * 60 * 1000, toFake: ['Date'] })
    await expect(store.write(store.key('code', 'x'), { v: 1 }, 60)).resolves.toBeUndefined()
    await new Promise(r => setImmediate(r))
    expect(errors).toHaveLength(1)
  })
})
