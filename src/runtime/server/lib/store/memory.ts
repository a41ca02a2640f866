import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { createEnvelopeBackend } from './envelope'
import type { StoreBackend } from './types'

/**
 * In-process backend on unstorage's memory driver. Entries live in envelopes with their expiry
 * time; take, setIfAbsent and incr are serialised per key. Data is lost on restart and not
 * shared between processes.
 */
export function createMemoryBackend(): StoreBackend {
  const storage = createStorage({ driver: memoryDriver() })
  return createEnvelopeBackend({ driver: 'memory', storage })
}
