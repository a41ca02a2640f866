import { randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import type { Dirent } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { defineDriver } from 'unstorage'

const DRIVER_NAME = 'fs-atomic'
const TEMP_FILE_RE = /^\..+\.[0-9a-f]{32}\.tmp$/

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
  /** Atomically claim, read and delete the file of a key (see {@link takeFile}). */
  take(key: string): Promise<string | null>
  /**
   * Create the file of a key unless a file that is not `stale` exists, atomically between
   * processes (see {@link createFileExclusive}). Resolves true when this call created it.
   */
  create(key: string, data: string, stale: (current: string) => boolean): Promise<boolean>
  /** Delete temp files older than `maxAgeMs` left behind by interrupted writes or takes. */
  removeStaleTempFiles(maxAgeMs: number): Promise<number>
}

function driverError(message: string): Error {
  return new Error(`[unstorage] [${DRIVER_NAME}] ${message}`)
}

function hasCode(error: unknown, ...codes: string[]): boolean {
  return typeof error === 'object' && error !== null && 'code' in error
    && typeof error.code === 'string' && codes.includes(error.code)
}

/** True for the names of temp files written by this driver (`.<name>.<32 hex>.tmp`). */
export function isTempFileName(name: string): boolean {
  return TEMP_FILE_RE.test(name)
}

/** A unique temp file path next to `target`. */
function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.${randomBytes(16).toString('hex')}.tmp`)
}

/** Split a key on `:`, `/` and `\` (like unstorage), rejecting `.`/`..` and temp-file-like segments. */
function keySegments(key: string): string[] {
  const segments = (key ?? '').split(/[:/\\]/).filter(Boolean)
  for (const segment of segments) {
    if (segment === '.' || segment === '..' || segment.includes('\0') || isTempFileName(segment)) {
      throw driverError(`Invalid key: ${JSON.stringify(key)}. It should not contain .., . or temp file segments`)
    }
  }
  return segments
}

/**
 * Map a key to its file below `base`: `a:b:c` becomes `base/a/b/c`. Throws for empty keys and
 * `.`/`..` segments.
 */
export function keyToPath(base: string, key: string): string {
  const segments = keySegments(key)
  if (segments.length === 0) throw driverError(`Invalid key: ${JSON.stringify(key)}. It should not be empty`)
  return join(resolve(base), ...segments)
}

async function readText(path: string): Promise<string | null> {
  try {
    return await fsp.readFile(path, 'utf8')
  }
  catch (error) {
    if (hasCode(error, 'ENOENT', 'ENOTDIR', 'EISDIR')) return null
    throw error
  }
}

/** Create `path` (O_EXCL), write `data` and fsync it. */
async function writeSynced(path: string, data: string | Uint8Array): Promise<void> {
  const handle = await fsp.open(path, 'wx', 0o600)
  try {
    await handle.writeFile(data)
    await handle.sync()
  }
  finally {
    await handle.close()
  }
}

/** Write to a temp file in the target directory, fsync it, then rename it over the target. */
async function writeAtomic(path: string, data: string | Uint8Array): Promise<void> {
  await fsp.mkdir(dirname(path), { recursive: true, mode: 0o700 })
  const temp = tempPathFor(path)
  try {
    await writeSynced(temp, data)
    await fsp.rename(temp, path)
  }
  catch (error) {
    await fsp.rm(temp, { force: true })
    throw error
  }
}

/** Errors of link() on filesystems without hard links (SMB/CIFS, some network and FUSE mounts). */
const NO_HARD_LINKS = ['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']

/**
 * Write `data` to a temp file, fsync it, then link() it to `path`: link fails with EEXIST when the
 * target exists, so of concurrent creations (also in other processes on the same filesystem)
 * exactly one succeeds, and the winner's file is complete the moment it appears. On a filesystem
 * without hard links, the target is created with O_EXCL instead (just as exclusive; a reader may
 * then see it before its content, which reads as an invalid, hence absent, entry).
 */
async function createExclusive(path: string, data: string | Uint8Array): Promise<boolean> {
  await fsp.mkdir(dirname(path), { recursive: true, mode: 0o700 })
  const temp = tempPathFor(path)
  try {
    await writeSynced(temp, data)
    try {
      await fsp.link(temp, path)
      return true
    }
    catch (error) {
      if (hasCode(error, 'EEXIST')) return false
      if (!hasCode(error, ...NO_HARD_LINKS)) throw error
    }
    try {
      await writeSynced(path, data)
      return true
    }
    catch (error) {
      if (hasCode(error, 'EEXIST')) return false
      throw error
    }
  }
  finally {
    await fsp.rm(temp, { force: true })
  }
}


/** A lock older than this was left by a process that died holding it. */
const STALE_LOCK_MS = 10_000

/**
 * Run `fn` holding the lock file of `path` (created with O_EXCL, so one process at a time), or
 * resolve `busy` when another process holds it. The lock is named like a temp file: hidden from
 * key listings and removed by the stale temp file sweep if its holder died.
 */
async function withFileLock<T>(path: string, busy: T, fn: () => Promise<T>): Promise<T> {
  const lock = join(dirname(path), `.${basename(path)}.${'0'.repeat(32)}.tmp`)
  let handle: Awaited<ReturnType<typeof fsp.open>> | undefined
  for (let attempt = 0; attempt < 2 && !handle; attempt++) {
    try {
      handle = await fsp.open(lock, 'wx', 0o600)
    }
    catch (error) {
      if (!hasCode(error, 'EEXIST')) throw error
      const info = await fsp.stat(lock).catch(() => null)
      if (info && Date.now() - info.mtimeMs < STALE_LOCK_MS) return busy
      // A stale lock is moved out of the way with rename(): of processes breaking it at once,
      // one succeeds, and none can remove a fresh lock that another process took meanwhile.
      try {
        await fsp.rename(lock, tempPathFor(lock))
      }
      catch (renameError) {
        if (!hasCode(renameError, 'ENOENT')) throw renameError
        return busy
      }
    }
  }
  if (!handle) return busy
  try {
    await handle.close()
    return await fn()
  }
  finally {
    await fsp.rm(lock, { force: true })
  }
}

/**
 * Create the file of `path` unless a live one exists: a missing file is created with link()
 * (exactly one of any number of concurrent creators wins); a `stale` one (an expired entry) is
 * replaced under the key's lock file, so that of concurrent replacers, also in other processes,
 * exactly one wins and a fresh entry is never removed.
 */
async function createUnlessLive(path: string, data: string, stale: (current: string) => boolean): Promise<boolean> {
  const current = await readText(path)
  if (current === null) return createExclusive(path, data)
  if (!stale(current)) return false
  return withFileLock(path, false, async () => {
    const again = await readText(path)
    if (again !== null) {
      if (!stale(again)) return false
      await fsp.unlink(path).catch((error: unknown) => {
        if (!hasCode(error, 'ENOENT')) throw error
      })
    }
    return createExclusive(path, data)
  })
}

/** Create the file of `key` below `base` unless a live one exists (see {@link createUnlessLive}). */
export function createFileExclusive(base: string, key: string, data: string, stale: (current: string) => boolean = () => false): Promise<boolean> {
  return createUnlessLive(keyToPath(base, key), data, stale)
}

async function claimAndRead(path: string): Promise<string | null> {
  const info = await fsp.lstat(path).catch((error: unknown) => {
    if (hasCode(error, 'ENOENT', 'ENOTDIR')) return null
    throw error
  })
  if (!info?.isFile()) return null
  const claimed = tempPathFor(path)
  try {
    await fsp.rename(path, claimed)
  }
  catch (error) {
    if (hasCode(error, 'ENOENT', 'ENOTDIR')) return null
    throw error
  }
  try {
    return await fsp.readFile(claimed, 'utf8')
  }
  finally {
    await fsp.rm(claimed, { force: true })
  }
}

/**
 * Atomically take the file of `key` below `base`: rename it to a unique temp name (only one of
 * any number of concurrent renames of the same file succeeds, across processes on the same
 * filesystem), then read and delete the claimed copy. Resolves the content, or null when the file
 * does not exist or another caller claimed it first.
 */
export function takeFile(base: string, key: string): Promise<string | null> {
  return claimAndRead(keyToPath(base, key))
}

interface FileVisit {
  path: string
  name: string
  segments: string[]
}

/** Recursively list the files below `dir` (missing directories yield nothing). */
async function walkFiles(dir: string, segments: string[], out: FileVisit[]): Promise<FileVisit[]> {
  let entries: Dirent[]
  try {
    entries = await fsp.readdir(dir, { withFileTypes: true })
  }
  catch (error) {
    if (hasCode(error, 'ENOENT', 'ENOTDIR')) return out
    throw error
  }
  await Promise.all(entries.map(async (entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) await walkFiles(path, [...segments, entry.name], out)
    else if (entry.isFile()) out.push({ path, name: entry.name, segments: [...segments, entry.name] })
  }))
  return out
}

async function removeStaleTempFiles(root: string, maxAgeMs: number): Promise<number> {
  const cutoff = Date.now() - maxAgeMs
  let removed = 0
  const files = (await walkFiles(root, [], [])).filter(file => isTempFileName(file.name))
  for (const file of files) {
    const info = await fsp.stat(file.path).catch(() => null)
    if (info && info.mtimeMs < cutoff) {
      await fsp.rm(file.path, { force: true })
      removed++
    }
  }
  return removed
}

function toWritable(value: unknown): string | Uint8Array {
  if (typeof value === 'string' || value instanceof Uint8Array) return value
  throw driverError('setItemRaw expects a string or a Uint8Array')
}

/**
 * unstorage driver storing each key in its own file below `base` (`a:b:c` is `base/a/b/c`).
 * Writes are crash-safe (temp file, fsync, rename), `getKeys` skips temp files, and the instance
 * (`getInstance()`) exposes the rename-based atomic take and the link-based exclusive create.
 */
export const fsAtomicDriver = defineDriver<FsAtomicDriverOptions, FsAtomicInstance>((options) => {
  if (!options?.base) throw driverError('Missing required option `base`.')
  const root = resolve(options.base)
  const path = (key: string): string => keyToPath(root, key)
  const dirOf = (base: string | undefined): string => join(root, ...keySegments(base ?? ''))

  const instance: FsAtomicInstance = {
    base: root,
    path,
    take: key => claimAndRead(path(key)),
    create: (key, data, stale) => createUnlessLive(path(key), data, stale),
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
        await fsp.unlink(path(key))
      }
      catch (error) {
        if (!hasCode(error, 'ENOENT', 'ENOTDIR')) throw error
      }
    },
    async getKeys(base) {
      const prefix = keySegments(base ?? '')
      const files = await walkFiles(dirOf(base), prefix, [])
      return files.filter(file => !isTempFileName(file.name)).map(file => file.segments.join(':'))
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
