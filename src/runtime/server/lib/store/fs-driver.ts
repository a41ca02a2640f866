import fs, { promises as fsp } from 'node:fs'
import { join, resolve } from 'node:path'
import { defineDriver } from 'unstorage'
import { claimAndRead, createUnlessLive, type AfterCreate } from './fs-exclusive'
import { DRIVER_NAME, driverError, hasCode, isLogFileName, isTempFileName, keySegments, keyToPath, readText, removeStaleTempFiles, walkFiles, writeAtomic } from './fs-files'

/** Options of {@link fsAtomicDriver}. */
export interface FsAtomicDriverOptions {
  /** Root directory of the entries. */
  base: string
}

/** Object returned by the driver's `getInstance()`. */
export interface FsAtomicInstance {
  /** Absolute root directory. */
  readonly base: string
  /** File path of a key. */
  path(key: string): string
  /** Atomically claim, read and delete the file of a key (see `takeFile`). */
  take(key: string): Promise<string | null>
  /** Create the file of a key unless a live one exists (see `createUnlessLive`), then store it under `after.copies` and run `after.alongside`. */
  create(key: string, data: string, stale: (current: string) => boolean, after?: AfterCreate): Promise<boolean>
  /** Delete temp files older than `maxAgeMs` left behind by interrupted writes or takes. */
  removeStaleTempFiles(maxAgeMs: number): Promise<number>
}

function toWritable(value: unknown): string | Uint8Array {
  if (typeof value === 'string' || value instanceof Uint8Array) return value
  throw driverError('setItemRaw expects a string or a Uint8Array')
}

/** unstorage driver with one crash-safe file per key below `base`; its instance exposes the atomic take and create. */
export const fsAtomicDriver = defineDriver<FsAtomicDriverOptions, FsAtomicInstance>((options) => {
  if (!options?.base) throw driverError('Missing required option `base`.')
  const root = resolve(options.base)
  const path = (key: string): string => keyToPath(root, key)
  const dirOf = (base: string | undefined): string => join(root, ...keySegments(base ?? ''))

  const instance: FsAtomicInstance = {
    base: root,
    path,
    take: key => claimAndRead(path(key)),
    create: (key, data, stale, after = { copies: [] }) => createUnlessLive(path(key), data, stale, { ...after, copies: after.copies.map(path) }),
    removeStaleTempFiles: maxAgeMs => removeStaleTempFiles(root, maxAgeMs),
  }

  return {
    name: DRIVER_NAME,
    options,
    getInstance: () => instance,
    async hasItem(key) {
      const info = await fsp.stat(path(key)).catch(() => null)
      return info?.isFile() ?? false
    },
    getItem: key => readText(path(key)),
    getItemRaw: key => readText(path(key)),
    setItem: (key, value) => writeAtomic(path(key), value),
    setItemRaw: (key, value: unknown) => writeAtomic(path(key), toWritable(value)),
    async removeItem(key) {
      try {
        fs.unlinkSync(path(key))
      }
      catch (error) {
        if (!hasCode(error, 'ENOENT', 'ENOTDIR')) throw error
      }
    },
    async getKeys(base) {
      const prefix = keySegments(base ?? '')
      const files = await walkFiles(dirOf(base), prefix, [])
      return files.filter(file => !isTempFileName(file.name) && !isLogFileName(file.name)).map(file => file.segments.join(':'))
    },
    async clear(base) {
      const dir = dirOf(base)
      const entries = await fsp.readdir(dir).catch((error: unknown) => {
        if (hasCode(error, 'ENOENT', 'ENOTDIR')) return []
        throw error
      })
      await Promise.all(entries.map(name => fsp.rm(join(dir, name), { recursive: true, force: true })))
    },
  }
})
