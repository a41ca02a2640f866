import { hash as nativeHash } from '@node-rs/bcrypt'
import { describe, expect, it, vi } from 'vitest'
import { createBcryptEngine } from '../../src/runtime/password/server/bcrypt'
import { createPasswordHasher } from '../../src/runtime/password/server/hashing'

// node:worker_threads as the bundles of non-Node presets get it: unenv's stand-in, whose Worker
// starts no thread, never answers and never fails. A hash there must fail, not wait forever.
// (unenv ships no types for its runtime modules: the specifier is a plain string.)
vi.mock('node:worker_threads', async () => {
  const standIn: string = 'unenv/node/worker_threads'
  return await import(/* @vite-ignore */ standIn) as Record<string, unknown>
})

describe('bcrypt worker threads where node:worker_threads is a stand-in', () => {
  it('fail the hash at once with the reason (it never answered before)', async () => {
    const engine = await createBcryptEngine({ workers: 1, warn: () => {}, prefer: 'js', threads: true })
    try {
      expect(engine.kind).toBe('worker')
      await expect(engine.hash('pw', 4)).rejects.toThrow('node:worker_threads is a stand-in here (its Worker starts no thread)')
    }
    finally {
      await engine.close()
    }
  }, 5000)

  it('a login there fails as an error of the server, never as a wrong password', async () => {
    const hasher = createPasswordHasher({ rounds: 4, concurrency: 1, handlers: () => undefined, warn: () => {}, engine: ({ workers, warn }) => createBcryptEngine({ workers, warn, prefer: 'js', threads: true }) })
    await expect(hasher.verify('pw', await nativeHash('pw', { cost: 4 }))).rejects.toThrow(/stand-in/)
  }, 5000)
})
