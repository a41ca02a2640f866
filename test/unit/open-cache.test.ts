import { describe, expect, it, vi } from 'vitest'
import { createSealer } from '../../src/runtime/server/lib/store/crypto'
import { cachedOpen } from '../../src/runtime/server/lib/store/open-cache'

/** A real sealer whose `open` calls are counted. */
function countingSealer() {
  const sealer = createSealer('open-cache-test-key-0123456789-abcdefghijk')
  const open = vi.spyOn(sealer, 'open')
  return { sealer, open }
}

describe('cachedOpen', () => {
  it('opens a sealed value once, however often it is read', () => {
    const { sealer, open } = countingSealer()
    const read = cachedOpen(sealer)
    const sealed = sealer.seal('{"organization":"acme"}')
    for (let i = 0; i < 5; i++) expect(read(sealed)).toBe('{"organization":"acme"}')
    expect(open).toHaveBeenCalledTimes(1)
    // The same plain text sealed again is another sealed text (another IV): opened on its own.
    expect(read(sealer.seal('{"organization":"acme"}'))).toBe('{"organization":"acme"}')
    expect(open).toHaveBeenCalledTimes(2)
  })

  it('does not cache what does not open', () => {
    const { sealer, open } = countingSealer()
    const read = cachedOpen(sealer)
    const other = createSealer('another-key-0123456789-abcdefghijklmnopqr').seal('secret')
    expect(read(other)).toBeNull()
    expect(read(other)).toBeNull()
    expect(open).toHaveBeenCalledTimes(2)
  })

  it('keeps within its budget in two generations: what was read lately stays, what was not goes; a large value is never cached', () => {
    const { sealer, open } = countingSealer()
    const values = Array.from({ length: 64 }, (_, i) => sealer.seal(String(i).padStart(10, '0')))
    const size = values[0]!.length + 10
    // Room for 64 values of this size (32 a generation), the largest it caches.
    const read = cachedOpen(sealer, size * 64)
    for (const value of values) read(value)
    expect(open).toHaveBeenCalledTimes(64)
    open.mockClear()
    // All 64 are kept: values[32..63] in the current generation, values[0..31] in the previous one.
    // values[0] read again starts a new generation: values[1..31], not read since, are dropped.
    read(values[0]!)
    for (const value of values.slice(32)) read(value)
    expect(open).toHaveBeenCalledTimes(0)
    read(values[1]!)
    expect(open).toHaveBeenCalledTimes(1)
    read(values[0]!)
    expect(open).toHaveBeenCalledTimes(1)
    const large = sealer.seal('x'.repeat(size))
    read(large)
    read(large)
    expect(open).toHaveBeenCalledTimes(3)
  })
})
