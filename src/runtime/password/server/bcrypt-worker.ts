import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { BcryptEngine } from './bcrypt-engine'

/**
 * The worker thread's code, as text (`eval`): a worker file of its own would not be copied into
 * `.output`. It answers one message at a time, synchronously: the thread is there to block.
 */
const WORKER_SOURCE = `
import('node:worker_threads').then(({ parentPort, workerData }) => {
  parentPort.postMessage({ started: true })
  const loaded = import(workerData.module).then(m => m.default && m.default.hashSync ? m.default : m)
  // A module that cannot load fails each job with its reason instead of ending the thread.
  loaded.catch(() => {})
  parentPort.on('message', async (job) => {
    try {
      const bcrypt = await loaded
      let value
      if (job.op === 'hash') value = bcrypt.hashSync(job.password, job.cost)
      else {
        // A hash bcryptjs cannot read is no match, as with @node-rs/bcrypt.
        try { value = bcrypt.compareSync(job.password, job.hash) === true }
        catch { value = false }
      }
      parentPort.postMessage({ id: job.id, value })
    }
    catch (error) {
      parentPort.postMessage({ id: job.id, error: String(error && error.message || error) })
    }
  })
})
`

function moduleEntry(manifest: unknown): string {
  const pkg = (manifest ?? {}) as { exports?: Record<string, { import?: string | { default?: string } }>, module?: string, main?: string }
  const target = pkg.exports?.['.']?.import
  return (typeof target === 'string' ? target : target?.default) ?? pkg.module ?? pkg.main ?? 'index.js'
}

/**
 * URL of bcryptjs's ES module: `import.meta.resolve`, else found from this file's `node_modules` path
 * (`require.resolve` would pick the CommonJS build, which the output does not hold).
 */
export function bcryptjsUrl(): string {
  try {
    return import.meta.resolve('bcryptjs')
  }
  catch {
    // Resolved below.
  }
  for (const dir of createRequire(import.meta.url).resolve.paths('bcryptjs') ?? []) {
    const root = join(dir, 'bcryptjs')
    const manifest = join(root, 'package.json')
    if (existsSync(manifest)) return pathToFileURL(join(root, moduleEntry(JSON.parse(readFileSync(manifest, 'utf8'))))).href
  }
  throw new Error('[svc-auth] bcryptjs was not found beside the server')
}

type Job = { op: 'hash', password: string, cost: number } | { op: 'verify', password: string, hash: string }

interface Reply {
  id?: number
  value?: unknown
  error?: string
  started?: true
}

/** The part of a `node:worker_threads` Worker the engine uses. */
export interface WorkerThread {
  /** 0 in the main thread: a Worker whose id is 0 is a stand-in that starts no thread (unenv's). */
  readonly threadId: number
  on(event: 'message', listener: (reply: Reply) => void): unknown
  on(event: 'error', listener: (error: unknown) => void): unknown
  on(event: 'messageerror', listener: () => void): unknown
  on(event: 'exit', listener: (code: number) => void): unknown
  postMessage(message: unknown): void
  ref(): void
  unref(): void
  terminate(): Promise<number>
}

export type StartThread = (source: string, workerData: { module: string }) => WorkerThread

const startThread: StartThread = (source, workerData) => new Worker(source, { eval: true, workerData })

/** How long a new thread may take to start (a stand-in Worker that never starts fails its job instead of hanging). */
export const START_TIMEOUT_MS = 30_000

interface Slot {
  worker: WorkerThread
  job?: { id: number, resolve(value: unknown): void, reject(error: Error): void }
  dead: boolean
  startTimer?: ReturnType<typeof setTimeout>
}

export interface WorkerEngineOptions {
  /** Most worker threads (each computation has a thread of its own). */
  size: number
  module?: string
  start?: StartThread
  startTimeout?: number
}

const stopped = (reason: string) => new Error(`[svc-auth] The bcrypt worker thread stopped (${reason}); the password was not processed`)

/**
 * bcryptjs in up to `size` worker threads, started on first use and unreferenced while idle. A job
 * waits for a free thread; a crashed thread rejects its job and is replaced by the next.
 */
export function createWorkerEngine({ size, module = bcryptjsUrl(), start = startThread, startTimeout = START_TIMEOUT_MS }: WorkerEngineOptions): BcryptEngine {
  const slots = new Set<Slot>()
  const idle: Slot[] = []
  const waiting: Array<{ resolve(slot: Slot): void, reject(error: Error): void }> = []
  let nextId = 0
  let closed = false

  const fail = (slot: Slot, reason: string) => {
    if (slot.dead) return
    slot.dead = true
    clearTimeout(slot.startTimer)
    slots.delete(slot)
    const index = idle.indexOf(slot)
    if (index >= 0) idle.splice(index, 1)
    slot.job?.reject(stopped(reason))
    slot.job = undefined
    void slot.worker.terminate()
    // A waiting job gets a new thread (or the reason there is none: a throw here would end the process).
    const next = closed ? undefined : waiting.shift()
    if (!next) return
    try {
      next.resolve(spawn())
    }
    catch (error) {
      next.reject(error instanceof Error ? error : new Error(String(error)))
    }
  }

  const spawn = (): Slot => {
    const worker = start(WORKER_SOURCE, { module })
    if (worker.threadId === 0) {
      void worker.terminate()
      throw new Error('[svc-auth] node:worker_threads is a stand-in here (its Worker starts no thread), so bcryptjs cannot compute in a worker thread: the password was not processed')
    }
    const slot: Slot = { worker, dead: false }
    slot.startTimer = setTimeout(() => fail(slot, `it did not start within ${startTimeout >= 1000 ? `${Math.round(startTimeout / 1000)} s` : `${startTimeout} ms`}: worker threads do not seem to work here`), startTimeout)
    slot.startTimer.unref?.()
    worker.on('message', (reply: Reply) => {
      if (reply?.started) {
        clearTimeout(slot.startTimer)
        slot.startTimer = undefined
        return
      }
      const job = slot.job
      if (!job || reply?.id !== job.id) return
      slot.job = undefined
      if (typeof reply.error === 'string') job.reject(new Error(`[svc-auth] bcryptjs: ${reply.error}`))
      else job.resolve(reply.value)
    })
    worker.on('error', error => fail(slot, error instanceof Error ? error.message : String(error)))
    worker.on('messageerror', () => fail(slot, 'an unreadable message'))
    worker.on('exit', code => fail(slot, `exit code ${code}`))
    slots.add(slot)
    return slot
  }

  const acquire = (): Promise<Slot> => {
    if (closed) return Promise.reject(new Error('[svc-auth] The bcrypt worker threads are closed'))
    const free = idle.pop()
    if (free) return Promise.resolve(free)
    if (slots.size < size) return Promise.resolve(spawn())
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }))
  }

  const release = (slot: Slot) => {
    if (slot.dead) return
    const next = waiting.shift()
    if (next) return next.resolve(slot)
    slot.worker.unref()
    idle.push(slot)
  }

  const run = async (job: Job): Promise<unknown> => {
    const slot = await acquire()
    try {
      return await new Promise((resolve, reject) => {
        const id = ++nextId
        slot.job = { id, resolve, reject }
        slot.worker.ref()
        slot.worker.postMessage({ id, ...job })
      })
    }
    finally {
      release(slot)
    }
  }

  return {
    kind: 'worker',
    async hash(password, cost) {
      const value = await run({ op: 'hash', password, cost })
      if (typeof value !== 'string') throw new Error('[svc-auth] bcryptjs returned no hash')
      return value
    },
    async verify(password, hash) {
      return (await run({ op: 'verify', password, hash })) === true
    },
    async close() {
      closed = true
      for (const waiter of waiting.splice(0)) waiter.reject(new Error('[svc-auth] The bcrypt worker threads are closed'))
      await Promise.all([...slots].map(slot => slot.worker.terminate()))
    },
  }
}
