import { execFile } from 'node:child_process'
import { EventEmitter } from 'node:events'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { promisify } from 'node:util'
import { hash as nativeHash, verify as nativeVerify } from '@node-rs/bcrypt'
import bcryptjs from 'bcryptjs'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { BCRYPT_ENV, bcryptPreference, createBcryptEngine, createInlineEngine, loadNativeBcrypt, type BcryptEngine } from '../../src/runtime/password/server/bcrypt'
import { createWorkerEngine, START_TIMEOUT_MS, type WorkerThread } from '../../src/runtime/password/server/bcrypt-worker'
import { createPasswordHasher } from '../../src/runtime/password/server/hashing'

const FAKE = pathToFileURL(join(import.meta.dirname, 'helpers/fake-bcryptjs.mjs')).href
const engines: BcryptEngine[] = []
const keep = <E extends BcryptEngine>(engine: E): E => {
  engines.push(engine)
  return engine
}
afterAll(() => Promise.all(engines.map(e => e.close())))
afterEach(() => {
  vi.unstubAllEnvs()
  vi.unstubAllGlobals()
})

/** A Worker that starts no thread and never answers (as unenv's stand-in of node:worker_threads). */
class StubWorker extends EventEmitter implements WorkerThread {
  terminated = false
  constructor(readonly threadId: number) {
    super()
  }

  postMessage() {}
  ref() {}
  unref() {}
  async terminate() {
    this.terminated = true
    return 0
  }
}

/** Largest event-loop delay (ms) while `work` runs, from a 1 ms timer and the histogram. */
async function maxLoopDelay(work: () => Promise<unknown>): Promise<number> {
  const histogram = monitorEventLoopDelay({ resolution: 5 })
  let last = performance.now()
  let worstGap = 0
  const probe = setInterval(() => {
    const now = performance.now()
    worstGap = Math.max(worstGap, now - last)
    last = now
  }, 1)
  histogram.enable()
  try {
    await work()
  }
  finally {
    histogram.disable()
    clearInterval(probe)
  }
  return Math.max(worstGap, histogram.max / 1e6)
}

describe('choosing the implementation', () => {
  it(`${BCRYPT_ENV}=js asks for bcryptjs; anything else for the native addon`, () => {
    expect(bcryptPreference({ [BCRYPT_ENV]: 'js' })).toBe('js')
    expect(bcryptPreference({ [BCRYPT_ENV]: ' JS ' })).toBe('js')
    expect(bcryptPreference({ [BCRYPT_ENV]: 'native' })).toBe('native')
    expect(bcryptPreference({})).toBe('native')
  })

  it('uses @node-rs/bcrypt when it loads, without a warning', async () => {
    const warn = vi.fn()
    const engine = keep(await createBcryptEngine({ workers: 1, warn }))
    expect(engine.kind).toBe('native')
    expect(warn).not.toHaveBeenCalled()
  })

  it('falls back to bcryptjs in worker threads when the addon cannot load, with a one-line warning', async () => {
    const warn = vi.fn()
    const loadNative = () => Promise.reject(new Error('Cannot find native binding. npm has a bug related to optional dependencies\n(more lines)'))
    const engine = keep(await createBcryptEngine({ workers: 1, warn, loadNative }))
    expect(engine.kind).toBe('worker')
    expect(warn).toHaveBeenCalledTimes(1)
    expect(warn.mock.calls[0]![0]).toMatch(/^@node-rs\/bcrypt could not be loaded \(Cannot find native binding\. npm has a bug related to optional dependencies\): passwords are hashed with bcryptjs in worker threads$/)
    expect(await engine.verify('pw', await engine.hash('pw', 4))).toBe(true)
  })
})

describe('bcryptjs in worker threads', () => {
  it('hashes that verify with @node-rs/bcrypt, and verifies its hashes; a wrong password is refused', async () => {
    const engine = keep(await createBcryptEngine({ workers: 2, warn: () => {}, prefer: 'js' }))
    expect(engine.kind).toBe('worker')
    const password = 'Sunflower-42x é'
    const fromWorker = await engine.hash(password, 6)
    expect(fromWorker).toMatch(/^\$2b\$06\$/)
    expect(await nativeVerify(password, fromWorker)).toBe(true)
    expect(await nativeVerify('Sunflower-42y é', fromWorker)).toBe(false)
    const fromNative = await nativeHash(password, { cost: 6 })
    expect(await engine.verify(password, fromNative)).toBe(true)
    expect(await engine.verify('wrong', fromNative)).toBe(false)
    expect(await engine.verify(password, fromWorker)).toBe(true)
    expect(await engine.verify('wrong', fromWorker)).toBe(false)
    // Not a hash: bcryptjs answers false or throws, which the hasher turns into false.
    // A hash bcryptjs cannot read is no match, not a failure of the engine.
    expect(await engine.verify(password, 'not-a-hash')).toBe(false)
    expect(await engine.verify(password, '$2b$99$tooshort')).toBe(false)
  })

  it('never runs more threads than its size; a waiting job takes the next free thread', async () => {
    const engine = keep(createWorkerEngine({ size: 2, module: FAKE }))
    const hashes = await Promise.all(Array.from({ length: 8 }, (_, i) => engine.hash(`pw${i}`, 20)))
    const threads = new Set(hashes.map(h => h.split(':')[1]))
    expect(threads.size).toBe(2)
    expect(hashes.map(h => h.split(':')[2])).toEqual(Array.from({ length: 8 }, (_, i) => `pw${i}`))
  })

  it('a crashed thread rejects its job with a clear error and is replaced; jobs waiting for it still run', async () => {
    const engine = keep(createWorkerEngine({ size: 1, module: FAKE }))
    const first = await engine.hash('a', 0)
    const crashed = engine.hash('crash', 0)
    const waiting = engine.hash('b', 0)
    await expect(crashed).rejects.toThrow(/bcrypt worker thread stopped \(exit code 3\)/)
    const after = await waiting
    expect(after).toMatch(/:b$/)
    expect(after.split(':')[1]).not.toBe(first.split(':')[1])
    // An error thrown by bcryptjs fails the job only; the thread stays.
    await expect(engine.hash('throw', 0)).rejects.toThrow(/bcryptjs: thrown on purpose/)
    expect((await engine.hash('c', 0)).split(':')[1]).toBe(after.split(':')[1])
  })

  it('a module that cannot be loaded fails the job clearly', async () => {
    const engine = keep(createWorkerEngine({ size: 1, module: pathToFileURL('/nonexistent/bcryptjs.mjs').href }))
    await expect(engine.hash('a', 4)).rejects.toThrow(/bcryptjs: .*nonexistent/)
  })

  it('a node:worker_threads stand-in (a Worker that starts no thread, threadId 0 as unenv\'s) fails the job at once instead of never answering', async () => {
    const stub = new StubWorker(0)
    const engine = keep(createWorkerEngine({ size: 1, module: FAKE, start: () => stub }))
    await expect(engine.hash('pw', 0)).rejects.toThrow('[svc-auth] node:worker_threads is a stand-in here (its Worker starts no thread), so bcryptjs cannot compute in a worker thread: the password was not processed')
    expect(stub.terminated).toBe(true)
  })

  it('a thread that never starts fails its job after the start timeout, and the next job tries a new thread', async () => {
    const silent: StubWorker[] = []
    const engine = keep(createWorkerEngine({ size: 1, module: FAKE, startTimeout: 50, start: () => {
      const worker = new StubWorker(7)
      silent.push(worker)
      return worker
    } }))
    const started = Date.now()
    await expect(engine.hash('pw', 0)).rejects.toThrow('[svc-auth] The bcrypt worker thread stopped (it did not start within 50 ms: worker threads do not seem to work here); the password was not processed')
    expect(Date.now() - started).toBeLessThan(2000)
    expect(silent[0]!.terminated).toBe(true)
    await expect(engine.verify('pw', 'fake:1:pw')).rejects.toThrow(/did not start/)
    expect(silent).toHaveLength(2)
  })

  it('the start timeout bounds the start only: a hash that takes longer than it still answers', async () => {
    const engine = keep(createWorkerEngine({ size: 1, module: FAKE, startTimeout: 300 }))
    // The fake holds the thread for `cost` ms: 1 s of work, three times the start timeout.
    expect(await engine.hash('slow', 1000)).toMatch(/^fake:\d+:slow$/)
    expect(START_TIMEOUT_MS).toBe(30_000)
  })

  it('idle threads do not keep the process alive', async () => {
    const script = `
      import { createJiti } from 'jiti'
      const jiti = createJiti(${JSON.stringify(pathToFileURL(join(import.meta.dirname, 'x.mjs')).href)})
      const { createWorkerEngine } = await jiti.import('../../src/runtime/password/server/bcrypt-worker.ts')
      const engine = createWorkerEngine({ size: 2 })
      const hashed = await engine.hash('pw', 4)
      console.log(await engine.verify('pw', hashed))
    `
    const started = Date.now()
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: join(import.meta.dirname, '../..'), timeout: 15_000 })
    expect(stdout.trim()).toBe('true')
    expect(Date.now() - started).toBeLessThan(15_000)
  })
})

describe('a hasher whose engine cannot compute', () => {
  const stoppedEngine = (): BcryptEngine => ({
    kind: 'worker',
    hash: () => Promise.reject(new Error('[svc-auth] The bcrypt worker thread stopped (exit code 1)')),
    verify: () => Promise.reject(new Error('[svc-auth] The bcrypt worker thread stopped (exit code 1)')),
    close: async () => {},
  })

  it('verify rejects instead of answering a silent false (no wrong-password answer for a broken engine)', async () => {
    const hasher = createPasswordHasher({ rounds: 4, concurrency: 1, handlers: () => undefined, engine: async () => stoppedEngine() })
    const real = await nativeHash('pw', { cost: 4 })
    await expect(hasher.verify('pw', real)).rejects.toThrow(/worker thread stopped/)
    await expect(hasher.verifyFirst(['pw'], real)).rejects.toThrow(/worker thread stopped/)
    // A hash that is not one stays a plain false, before any engine runs.
    expect(await hasher.verify('pw', '')).toBe(false)
  })

  it('a worker whose bcryptjs cannot load makes verify reject', async () => {
    const broken = keep(createWorkerEngine({ size: 1, module: pathToFileURL('/nonexistent/bcryptjs.mjs').href }))
    const hasher = createPasswordHasher({ rounds: 4, concurrency: 1, handlers: () => undefined, engine: async () => broken })
    await expect(hasher.verify('pw', await nativeHash('pw', { cost: 4 }))).rejects.toThrow(/bcryptjs: .*nonexistent/)
  })

  it('an engine that failed to start is made again on the next call, not kept failed', async () => {
    let calls = 0
    const engine = vi.fn(async () => {
      calls++
      if (calls === 1) throw new Error('bcryptjs could not be loaded')
      return keep(await createBcryptEngine({ workers: 1, warn: () => {} }))
    })
    const hasher = createPasswordHasher({ rounds: 4, concurrency: 1, handlers: () => undefined, engine })
    await expect(hasher.hash('pw')).rejects.toThrow(/could not be loaded/)
    const hashed = await hasher.hash('pw')
    expect(await hasher.verify('pw', hashed)).toBe(true)
    expect(engine).toHaveBeenCalledTimes(2)
  })

  it('a failed engine is forgotten by whoever sees it fail: every concurrent caller sees the failure, and the calls after it make one new engine', async () => {
    let fail = true
    const engine = vi.fn(async () => {
      await new Promise(r => setTimeout(r, 10))
      if (fail) throw new Error('bcryptjs could not be loaded')
      return stoppedEngine()
    })
    const hasher = createPasswordHasher({ rounds: 4, concurrency: 1, handlers: () => undefined, engine })
    const first = await Promise.allSettled(Array.from({ length: 5 }, () => hasher.hash('pw')))
    expect(first.map(r => r.status)).toEqual(Array(5).fill('rejected'))
    expect(engine).toHaveBeenCalledTimes(1)
    fail = false
    // Five callers at once after the failure: one new engine for all of them, not one each.
    await Promise.allSettled(Array.from({ length: 5 }, () => hasher.hash('pw')))
    expect(engine).toHaveBeenCalledTimes(2)
  })

  it('a host\'s verifyPassword that throws still counts as no match (its own contract)', async () => {
    const hasher = createPasswordHasher({ rounds: 4, concurrency: 1, handlers: () => ({ verifyPassword: () => Promise.reject(new Error('down')) }) as never, engine: async () => stoppedEngine() })
    expect(await hasher.verify('pw', 'anything')).toBe(false)
  })
})

describe('the password hasher on the fallback', () => {
  it(`${BCRYPT_ENV}=js: one warning for any number of hashes; hashes verify both ways`, async () => {
    vi.stubEnv(BCRYPT_ENV, 'js')
    const warn = vi.fn()
    let made: BcryptEngine | undefined
    const hasher = createPasswordHasher({
      rounds: 5,
      concurrency: 2,
      handlers: () => undefined,
      warn,
      // The default engine, kept to be closed after the tests.
      engine: async options => (made = keep(await createBcryptEngine(options))),
    })
    const hashes = await Promise.all(['one', 'two', 'three', 'four'].map(p => hasher.hash(p)))
    expect(made?.kind).toBe('worker')
    expect(await hasher.verify('three', hashes[2]!)).toBe(true)
    expect(await hasher.verify('four', hashes[2]!)).toBe(false)
    expect(await hasher.verify('one', 'garbage')).toBe(false)
    expect(await nativeVerify('two', hashes[1]!)).toBe(true)
    expect(await hasher.verify('native', await nativeHash('native', { cost: 5 }))).toBe(true)
    expect(await hasher.verifyFirst(['x', 'two'], hashes[1]!)).toBe(true)
    expect(warn).toHaveBeenCalledTimes(1)
    expect(warn.mock.calls[0]![0]).toBe(`${BCRYPT_ENV}=js: passwords are hashed with bcryptjs in worker threads instead of @node-rs/bcrypt`)
  })

  it('keeps its concurrency limit on the fallback', async () => {
    let running = 0
    let peak = 0
    const hasher = createPasswordHasher({
      rounds: 4,
      concurrency: 2,
      handlers: () => undefined,
      warn: () => {},
      engine: async (options) => {
        expect(options.workers).toBe(2)
        const inner = keep(await createBcryptEngine({ ...options, prefer: 'js' }))
        const counted = <T>(task: () => Promise<T>) => async () => {
          running++
          peak = Math.max(peak, running)
          try {
            return await task()
          }
          finally {
            running--
          }
        }
        return { ...inner, hash: (p, c) => counted(() => inner.hash(p, c))(), verify: (p, h) => counted(() => inner.verify(p, h))() }
      },
    })
    const hashes = await Promise.all(Array.from({ length: 7 }, (_, i) => hasher.hash(`p${i}`)))
    expect(await Promise.all(hashes.map((h, i) => hasher.verify(`p${i}`, h)))).toEqual(Array(7).fill(true))
    expect(peak).toBe(2)
  })

  it('the event loop keeps answering while hashing at cost 12 (bcryptjs in the main thread would not)', async () => {
    // One thread: the main thread keeps the machine's other core (2 cores here), as a server
    // with the automatic concurrency (cores - 1) does.
    const hasher = createPasswordHasher({
      rounds: 12,
      concurrency: 1,
      handlers: () => undefined,
      warn: () => {},
      engine: async options => keep(await createBcryptEngine({ ...options, prefer: 'js' })),
    })
    // Threads started and bcryptjs loaded before measuring, as in a server that has hashed before.
    await hasher.hash('warm')
    // Best of three rounds: bcrypt in this thread would block every round (each hash holds the
    // loop about 100 ms at a time), while a busy machine (other test files, builds) only
    // delays a thread now and then.
    let inWorkers = Infinity
    for (let round = 0; round < 3 && inWorkers >= 50; round++) {
      let hashes: string[] = []
      inWorkers = Math.min(inWorkers, await maxLoopDelay(async () => {
        hashes = await Promise.all(['a', 'b', 'c'].map(p => hasher.hash(p)))
      }))
      expect(await nativeVerify('c', hashes[2]!)).toBe(true)
    }
    // The control: the same probe sees bcryptjs's async mode block the loop in the main thread.
    const inMainThread = await maxLoopDelay(() => bcryptjs.hash('a', 12))
    console.info(`max event-loop delay hashing at cost 12: ${inWorkers.toFixed(1)} ms (bcryptjs in a worker, 3 hashes, best round), ${inMainThread.toFixed(1)} ms (bcryptjs in the main thread, 1 hash)`)
    expect(inWorkers).toBeLessThan(50)
    expect(inMainThread).toBeGreaterThan(50)
  })
})

describe('bcryptjs in the current thread (runtimes without threads: Workers)', () => {
  it('is chosen where threads cannot start, before the native addon and whatever NUXT_SVC_AUTH_BCRYPT says', async () => {
    vi.stubEnv(BCRYPT_ENV, 'js')
    const warn = vi.fn()
    const loadNative = vi.fn(loadNativeBcrypt)
    expect((await createBcryptEngine({ workers: 2, warn, loadNative, threads: false })).kind).toBe('inline')
    // On Workers by default (navigator.userAgent).
    vi.stubGlobal('navigator', { userAgent: 'Cloudflare-Workers' })
    expect((await createBcryptEngine({ workers: 2, warn, loadNative })).kind).toBe('inline')
    expect(loadNative).not.toHaveBeenCalled()
    expect(warn).not.toHaveBeenCalled()
  })

  it('hashes verify both ways with @node-rs/bcrypt; a wrong password or an unreadable hash is no match', async () => {
    const engine = await createInlineEngine()
    const hashed = await engine.hash('Sunflower-42x', 5)
    expect(hashed).toMatch(/^\$2b\$05\$/)
    expect(await nativeVerify('Sunflower-42x', hashed)).toBe(true)
    expect(await engine.verify('Sunflower-42x', hashed)).toBe(true)
    expect(await engine.verify('Sunflower-42y', hashed)).toBe(false)
    expect(await engine.verify('native', await nativeHash('native', { cost: 5 }))).toBe(true)
    expect(await engine.verify('pw', 'not-a-hash')).toBe(false)
    expect(await engine.verify('pw', '$2b$99$tooshort')).toBe(false)
  })

  it('rejects when bcryptjs cannot be loaded (never a wrong-password answer)', async () => {
    await expect(createInlineEngine(() => Promise.reject(new Error('Cannot find package bcryptjs')))).rejects.toThrow(/bcryptjs/)
  })

  it('takes no slot of the hasher: a slot handed from one request to another would tie them together on Workers', async () => {
    let running = 0
    let peak = 0
    const hasher = createPasswordHasher({
      rounds: 4,
      concurrency: 1,
      handlers: () => undefined,
      engine: async () => {
        const inner = await createInlineEngine()
        return {
          ...inner,
          hash: async (password, cost) => {
            running++
            peak = Math.max(peak, running)
            await new Promise(r => setTimeout(r, 20))
            try {
              return await inner.hash(password, cost)
            }
            finally {
              running--
            }
          },
        }
      },
    })
    const hashes = await Promise.all(['a', 'b', 'c'].map(p => hasher.hash(p)))
    expect(peak).toBe(3)
    expect(await hasher.verify('b', hashes[1]!)).toBe(true)
  })

  it('the @node-rs/bcrypt stand-in of edge builds fails to load with its reason, so bcryptjs takes over', async () => {
    vi.doMock('@node-rs/bcrypt', () => import('../../src/runtime/password/server/bcrypt-unavailable'))
    try {
      await expect(loadNativeBcrypt()).rejects.toThrow('@node-rs/bcrypt is not part of this build (no native addons on this platform)')
    }
    finally {
      vi.doUnmock('@node-rs/bcrypt')
    }
  })
})
