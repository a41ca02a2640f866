import { randomBytes } from 'node:crypto'
import fs, { constants as fsConstants, promises as fsp } from 'node:fs'
import type { Dirent } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'

/** File I/O of the fs store driver: steps that never wait for a disk are synchronous (cheaper than the thread pool). */

export const DRIVER_NAME = 'fs-atomic'
const TEMP_FILE_RE = /^\..+\.[0-9a-f]{32}\.tmp$/

/** An error of the driver, named like unstorage's own. */
export function driverError(message: string): Error {
  return new Error(`[unstorage] [${DRIVER_NAME}] ${message}`)
}

/** True when `error` is a system error with one of `codes` (`ENOENT`, …). */
export function hasCode(error: unknown, ...codes: string[]): boolean {
  return typeof error === 'object' && error !== null && 'code' in error
    && typeof error.code === 'string' && codes.includes(error.code)
}

/** True for the names of temp files written by this driver (`.<name>.<32 hex>.tmp`). */
export function isTempFileName(name: string): boolean {
  return TEMP_FILE_RE.test(name)
}

/** Files kept beside the entries that are no entry (the audit log's segments, `*.jsonl`): never listed, swept or read as one. */
export function isLogFileName(name: string): boolean {
  return name.endsWith('.jsonl')
}

/** A unique temp file path next to `target`. */
export function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.${randomBytes(16).toString('hex')}.tmp`)
}

/** Split a key on `:`, `/` and `\` (like unstorage), rejecting `.`/`..` and temp-file-like segments. */
export function keySegments(key: string): string[] {
  const segments = (key ?? '').split(/[:/\\]/).filter(Boolean)
  for (const segment of segments) {
    if (segment === '.' || segment === '..' || segment.includes('\0') || isTempFileName(segment)) {
      throw driverError(`Invalid key: ${JSON.stringify(key)}. It should not contain .., . or temp file segments`)
    }
  }
  return segments
}

/** Map a key to its file below `base` (`a:b:c` → `base/a/b/c`). Throws for empty keys and `.`/`..` segments. */
export function keyToPath(base: string, key: string): string {
  const segments = keySegments(key)
  if (segments.length === 0) throw driverError(`Invalid key: ${JSON.stringify(key)}. It should not be empty`)
  return join(resolve(base), ...segments)
}

/** Records are small: most files are read whole by one read() of this many bytes. */
const READ_CHUNK = 16 * 1024

const isMissing = (error: unknown): boolean => hasCode(error, 'ENOENT', 'ENOTDIR', 'EISDIR')

/** Content of a file, or null when there is none (open, one read, close for a small file). */
export async function readText(path: string): Promise<string | null> {
  let fd: number
  try {
    fd = fs.openSync(path, 'r')
  }
  catch (error) {
    if (isMissing(error)) return null
    throw error
  }
  try {
    const buffer = Buffer.allocUnsafe(READ_CHUNK)
    const bytesRead = fs.readSync(fd, buffer, 0, READ_CHUNK, 0)
    // A positional read leaves the file position at 0: a larger file is read again whole.
    return bytesRead < READ_CHUNK ? buffer.toString('utf8', 0, bytesRead) : fs.readFileSync(fd, 'utf8')
  }
  catch (error) {
    if (isMissing(error)) return null
    throw error
  }
  finally {
    fs.closeSync(fd)
  }
}

/** Runs `fn` (which creates an entry in the directory of `path`), creating the directory on ENOENT: no mkdir() per write. */
export async function inDirectoryOf<T>(path: string, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn()
  }
  catch (error) {
    if (!hasCode(error, 'ENOENT')) throw error
    await fsp.mkdir(dirname(path), { recursive: true, mode: 0o700 })
    return fn()
  }
}

/** Flags of a durable exclusive create: each write returns once its data (and the size) is on disk. */
const SYNCED_CREATE = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | (fsConstants.O_DSYNC ?? 0)

/** write(2) on the thread pool: resolves the number of bytes written. */
function writeBytes(fd: number, bytes: Uint8Array, offset: number): Promise<number> {
  return new Promise((resolve, reject) => {
    fs.write(fd, bytes, offset, bytes.length - offset, null, (error, written) => (error ? reject(error) : resolve(written)))
  })
}

/** Flags of a durable append: like {@link SYNCED_CREATE}, at the end of the file, creating it when missing. */
const SYNCED_APPEND = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_APPEND | (fsConstants.O_DSYNC ?? 0)

/** Writes all of `data` to a file opened with the flags above: on disk when it resolves (fsync where O_DSYNC is missing). */
async function writeDurably(fd: number, data: string | Uint8Array): Promise<void> {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data
  for (let offset = 0; offset < bytes.length;) offset += await writeBytes(fd, bytes, offset)
  if (!fsConstants.O_DSYNC) await new Promise<void>((resolve, reject) => fs.fsync(fd, error => (error ? reject(error) : resolve())))
}

/** Create `path` (O_EXCL), write `data` durably, close it, then `publish`: on disk before any name is seen. */
export async function writeSynced<T>(path: string, data: string | Uint8Array, publish: () => T): Promise<T> {
  const fd = await inDirectoryOf(path, () => fs.openSync(path, SYNCED_CREATE, 0o600))
  try {
    await writeDurably(fd, data)
  }
  finally {
    fs.closeSync(fd)
  }
  return publish()
}

/**
 * Append `data` to `path` (created 0600) in one write, on disk when it resolves. A crash part-way leaves a
 * torn last line at worst: the caller (holding the file's lock) cuts such a tail off before it appends.
 */
export async function appendSynced(path: string, data: string | Uint8Array): Promise<void> {
  const fd = await inDirectoryOf(path, () => fs.openSync(path, SYNCED_APPEND, 0o600))
  try {
    await writeDurably(fd, data)
  }
  finally {
    fs.closeSync(fd)
  }
}

/** Write to a temp file in the target directory durably, then rename it over the target. */
export async function writeAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const temp = tempPathFor(path)
  try {
    await writeSynced(temp, data, () => fs.renameSync(temp, path))
  }
  catch (error) {
    fs.rmSync(temp, { force: true })
    throw error
  }
}

/** A file found by {@link walkFiles}: its path, name and key segments. */
export interface FileVisit {
  path: string
  name: string
  segments: string[]
}

/** Recursively list the files below `dir` (missing directories yield nothing). */
export async function walkFiles(dir: string, segments: string[], out: FileVisit[]): Promise<FileVisit[]> {
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

/** Delete the temp files below `root` older than `maxAgeMs`; resolves how many. */
export async function removeStaleTempFiles(root: string, maxAgeMs: number): Promise<number> {
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
