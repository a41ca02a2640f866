import fs, { promises as fsp } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { hasCode, inDirectoryOf, keyToPath, readText, tempPathFor, writeAtomic, writeSynced } from './fs-files'

/* The fs driver's atomic steps between processes: create (link() or O_EXCL), replace under a lock file, take (rename()). */

/** Errors of link() on filesystems without hard links (SMB/CIFS, some network and FUSE mounts). */
const NO_HARD_LINKS = ['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']

/** Gives the file just linked to `path` its other names `copies`: the temp file renamed to the first, hard links for the rest. */
async function linkCopies(temp: string, path: string, copies: readonly string[]): Promise<void> {
  const [first, ...rest] = copies
  if (first === undefined) return
  await inDirectoryOf(first, () => fs.renameSync(temp, first))
  for (const copy of rest) {
    await inDirectoryOf(copy, () => {
      try {
        fs.linkSync(path, copy)
      }
      catch (error) {
        if (!hasCode(error, 'EEXIST')) throw error
        const spare = tempPathFor(copy)
        fs.linkSync(path, spare)
        fs.renameSync(spare, copy)
      }
    })
  }
}

/** What a creation does once it has won: give the file its other names, and run `alongside` meanwhile. */
export interface AfterCreate {
  /** Other names of the file, given in order (see `linkCopies`). */
  copies: readonly string[]
  /** Runs beside the copies once the file exists (e.g. the deletions a claim decides). */
  alongside?: () => Promise<unknown>
}

/**
 * Write `data` to a temp file durably, then link() it to `path`: exactly one creator wins and the file is
 * complete when it appears. Without hard links, O_EXCL under the key's lock file (`locked`).
 */
async function createExclusive(path: string, data: string | Uint8Array, after: AfterCreate, locked = false): Promise<boolean> {
  const { copies } = after
  const temp = tempPathFor(path)
  let consumed = false
  try {
    const linked = await writeSynced(temp, data, () => {
      try {
        fs.linkSync(temp, path)
        return true
      }
      catch (error) {
        if (hasCode(error, 'EEXIST')) return false
        if (!hasCode(error, ...NO_HARD_LINKS)) throw error
        return null
      }
    })
    if (linked) {
      await Promise.all([linkCopies(temp, path, copies), after.alongside?.()])
      consumed = copies.length > 0
      return true
    }
    if (linked === false) return false
    // Without hard links the file is visible before its content: it is created under the key's
    // lock file, which a replacer of a stale-looking (empty) file must take first.
    const create = async (): Promise<boolean> => {
      try {
        await writeSynced(path, data, () => undefined)
        return true
      }
      catch (error) {
        if (hasCode(error, 'EEXIST')) return false
        throw error
      }
    }
    if (!(await (locked ? create() : withFileLock(path, false, create)))) return false
    await Promise.all([(async () => {
      for (const copy of copies) await writeAtomic(copy, data)
    })(), after.alongside?.()])
    return true
  }
  finally {
    if (!consumed) fs.rmSync(temp, { force: true })
  }
}

/** A lock older than this was left by a process that died holding it. */
const STALE_LOCK_MS = 10_000

/** Moves a stale lock aside with rename() (one breaker wins) and deletes it; false when another broke it first. */
async function breakStaleLock(lock: string, stale: Pick<fs.Stats, 'ino' | 'mtimeMs'>): Promise<boolean> {
  const aside = tempPathFor(lock)
  try {
    await fsp.rename(lock, aside)
  }
  catch (error) {
    if (hasCode(error, 'ENOENT')) return false
    throw error
  }
  const moved = await fsp.stat(aside).catch(() => null)
  // The same inode number may have been given to a new file: its time tells them apart.
  if (moved && (moved.ino !== stale.ino || moved.mtimeMs !== stale.mtimeMs)) {
    await fsp.rename(aside, lock).catch(() => fsp.rm(aside, { force: true }))
    return false
  }
  await fsp.rm(aside, { force: true })
  return true
}

/** Run `fn` holding the O_EXCL lock file of `path` (named like a temp file: hidden, swept), or resolve `busy`. */
export async function withFileLock<T>(path: string, busy: T, fn: () => Promise<T>): Promise<T> {
  const lock = join(dirname(path), `.${basename(path)}.${'0'.repeat(32)}.tmp`)
  let handle: Awaited<ReturnType<typeof fsp.open>> | undefined
  for (let attempt = 0; attempt < 2 && !handle; attempt++) {
    try {
      handle = await fsp.open(lock, 'wx', 0o600)
    }
    catch (error) {
      if (!hasCode(error, 'EEXIST')) throw error
      const info = await fsp.stat(lock).catch((statError: unknown) => {
        if (hasCode(statError, 'ENOENT')) return null
        throw statError
      })
      // Released since the open: try again (never break it: a lock there now was taken after this look).
      if (!info) continue
      if (Date.now() - info.mtimeMs < STALE_LOCK_MS) return busy
      if (!(await breakStaleLock(lock, info))) return busy
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

const BUSY = Symbol('busy')

/**
 * Run `fn` holding the lock file of `path` ({@link withFileLock}), waiting for it while another holds it
 * (jittered backoff, a stale lock broken after {@link STALE_LOCK_MS}); throws after `waitMs`.
 */
export async function withFileLockWaiting<T>(path: string, fn: () => Promise<T>, waitMs = 3 * STALE_LOCK_MS): Promise<T> {
  const deadline = Date.now() + waitMs
  for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
    const result = await withFileLock<T | typeof BUSY>(path, BUSY, fn)
    if (result !== BUSY) return result
    if (Date.now() > deadline) throw new Error(`The lock file of ${basename(path)} stayed taken for ${waitMs} ms`)
    await new Promise(resolve => setTimeout(resolve, pause * (0.5 + Math.random())))
  }
}

/** Create the file of `path` unless a live one exists (a `stale` one is replaced under the lock), then do `after`. */
export async function createUnlessLive(path: string, data: string, stale: (current: string) => boolean, after: AfterCreate = { copies: [] }): Promise<boolean> {
  if (await createExclusive(path, data, after)) return true
  const current = await readText(path)
  if (current === null) return createExclusive(path, data, after)
  if (!stale(current)) return false
  return withFileLock(path, false, async () => {
    const again = await readText(path)
    if (again !== null) {
      if (!stale(again)) return false
      await fsp.unlink(path).catch((error: unknown) => {
        if (!hasCode(error, 'ENOENT')) throw error
      })
    }
    return createExclusive(path, data, after, true)
  })
}

/** Claim the file of `path` with rename(), then read and delete the claimed copy (see {@link takeFile}). */
export async function claimAndRead(path: string): Promise<string | null> {
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

/** Atomically take the file of `key` ({@link claimAndRead}); null when absent or claimed by another. */
export function takeFile(base: string, key: string): Promise<string | null> {
  return claimAndRead(keyToPath(base, key))
}
