import { createStorage } from 'unstorage'
import { createEnvelopeBackend } from './envelope'
import { fsAtomicDriver } from './fs-driver'
import type { FsAtomicInstance } from './fs-driver'
import type { StoreBackend } from './types'

/** Temp files older than this are leftovers of interrupted writes or takes. */
const STALE_TEMP_MS = 60_000

/** Options of {@link createFsBackend}. */
export interface FsBackendOptions {
  /** Directory of the entries (created on first write). */
  base: string
}

/** File-system backend: one crash-safe envelope file per key; `take` and `setIfAbsent` atomic between processes. */
export function createFsBackend(options: FsBackendOptions): StoreBackend {
  const driver = fsAtomicDriver({ base: options.base })
  const instance: FsAtomicInstance | undefined = driver.getInstance?.()
  if (!instance) throw new Error('fs store driver exposes no instance')
  const storage = createStorage({ driver })
  const backend = createEnvelopeBackend({
    driver: 'fs',
    storage,
    takeRaw: key => instance.take(key),
    createRaw: (key, raw, stale, after) => instance.create(key, raw, stale, after),
    housekeeping: async () => {
      await instance.removeStaleTempFiles(STALE_TEMP_MS)
    },
  })
  return { ...backend, directory: instance.base }
}
