import type { PasswordHandlers } from '../../types/auth'
import { randomToken } from '../../server/lib/store/crypto'
import { createBcryptEngine, type BcryptEngine } from './bcrypt'

/** Limits how many tasks run at once; the others wait in order. */
export interface Semaphore {
  run<T>(task: () => Promise<T>): Promise<T>
  /** Slots taken: tasks running now, and a freed slot already handed to the next waiting task. */
  readonly active: number
  /** Tasks waiting. */
  readonly waiting: number
}

/**
 * A semaphore of `limit` slots. A task that ends hands its slot straight to the next waiting
 * task, so a task that arrives at that moment cannot take it: never more than `limit` run at
 * once, waiting tasks start in order, and the next one starts without waiting for another turn
 * of the event loop.
 */
export function createSemaphore(limit: number): Semaphore {
  let active = 0
  const queue: Array<() => void> = []
  const release = () => {
    const next = queue.shift()
    if (next) next()
    else active--
  }
  return {
    get active() {
      return active
    },
    get waiting() {
      return queue.length
    },
    async run(task) {
      if (active < limit) active++
      else await new Promise<void>(resolve => queue.push(resolve))
      try {
        return await task()
      }
      finally {
        release()
      }
    },
  }
}

/**
 * Concurrency of bcrypt when `hashConcurrency` is 0: CPU cores minus one, at least 1, and at most
 * the libuv pool size minus one (so file storage and DNS still get a pool thread).
 */
export function automaticHashConcurrency(cores: number, poolSize = Number(globalThis.process?.env?.UV_THREADPOOL_SIZE) || 4): number {
  return Math.max(1, Math.min(cores - 1, poolSize - 1))
}

/**
 * CPU cores of the machine: `navigator.hardwareConcurrency` where there is one (Node 21 and
 * later, Workers), else `os.availableParallelism()` (node:os, loaded only then).
 */
export async function cpuCores(): Promise<number> {
  const cores = globalThis.navigator?.hardwareConcurrency
  if (typeof cores === 'number' && cores > 0) return cores
  return (await import('node:os')).availableParallelism()
}

/**
 * Password hashing of the provider. bcrypt runs on the libuv thread pool (`@node-rs/bcrypt`), or
 * where that native addon cannot load in worker threads (bcryptjs), so the event loop keeps
 * answering while hashes are computed; the host may replace both functions (`hashPassword`,
 * `verifyPassword`).
 */
export interface PasswordHasher {
  hash(password: string): Promise<string>
  /**
   * False for a wrong password and for a hash that is not a hash. Rejects when the built-in bcrypt
   * could not compute (never a silent false: the request fails as a 500 and is logged).
   */
  verify(password: string, hash: string): Promise<boolean>
  /**
   * The same work as {@link verify} against a hash of a random password (always false): used when
   * the user is unknown, so that answer takes as long as a wrong password.
   */
  verifyDummy(password: string): Promise<false>
  /**
   * Checks the forms of one typed password against `hash` (null: unknown user) and stops at the
   * first match. Every answer that is not a match costs `work` hash computations (default: one
   * per candidate, at least one), whether the user is unknown, the password is wrong or there is
   * no candidate to check (a password too long to be checked whole), so its timing tells none of
   * these apart.
   */
  verifyFirst(candidates: readonly string[], hash: string | null, work?: number): Promise<boolean>
  /** Computes the dummy hash ahead of the first unknown-user login. */
  warmUp(): Promise<void>
  /**
   * The same operations on the built-in bcrypt alone, whatever the host registered (its
   * `hashPassword` and `verifyPassword` handlers are never called): the engine, the cost and the
   * concurrency slots of the provider. Used by the `hashPassword`/`verifyPassword` server utils.
   */
  readonly bcrypt: BcryptHasher
}

/** {@link PasswordHasher} without the host's handlers: bcrypt only. */
export type BcryptHasher = Omit<PasswordHasher, 'bcrypt'>

/** Options of {@link createPasswordHasher}. */
export interface HasherOptions {
  rounds: number
  /** 0: automatic. */
  concurrency: number
  /** The host's handlers, read on every call (plugins may register them after startup). */
  handlers: () => PasswordHandlers | undefined
  /** Reports a fallback to bcryptjs (one line, once). @default console.warn */
  warn?: (message: string) => void
  /**
   * Whether worker threads can be started (false: bcryptjs computes in the current thread). The
   * module passes what the deploy target says. @default workerThreadsAvailable()
   */
  threads?: boolean
  /** The bcrypt implementation, made on first use. @default createBcryptEngine (native, else bcryptjs in workers) */
  engine?: (options: { workers: number, warn: (message: string) => void, threads?: boolean }) => Promise<BcryptEngine>
}

/**
 * The password hasher of the provider: bcrypt at `rounds`, at most `concurrency` computations at
 * once (hash, verify and the dummy share the slots, each held only while bcrypt computes), or
 * the host's functions when it registered them; its `bcrypt` member does the same on bcrypt only,
 * in the same slots. An engine that computes in the current thread (`inline`, on Workers) takes no
 * slot: its hashes take turns anyway, and a slot handed from one request to another would tie each
 * to the other's life.
 */
export function createPasswordHasher(options: HasherOptions): PasswordHasher {
  // Made on first use: a native addon that cannot load is caught there, not at import, and the
  // automatic concurrency asks for the machine's cores only where threads compute.
  let engine: Promise<{ bcrypt: BcryptEngine, limit: Semaphore | undefined }> | undefined
  const started = () => {
    const current = engine ??= (async () => {
      const slots = options.concurrency > 0 ? options.concurrency : automaticHashConcurrency(await cpuCores())
      const bcrypt = await (options.engine ?? createBcryptEngine)({ workers: slots, warn: options.warn ?? (message => console.warn(`[svc-auth] ${message}`)), threads: options.threads })
      return { bcrypt, limit: bcrypt.kind === 'inline' ? undefined : createSemaphore(slots) }
    })()
    // A failed engine is made again on the next call instead of failing every later one, and is
    // forgotten by whoever sees it fail (as the dummy hash below and the auth context): on Workers
    // the request that started it may never see it settle.
    return current.catch((error: unknown) => {
      if (engine === current) engine = undefined
      throw error
    })
  }
  const compute = async <T>(task: (bcrypt: BcryptEngine) => Promise<T>): Promise<T> => {
    const { bcrypt, limit } = await started()
    return limit ? limit.run(() => task(bcrypt)) : task(bcrypt)
  }
  const builtInHash = (password: string) => compute(bcrypt => bcrypt.hash(password, options.rounds))
  const builtInVerify = (password: string, hash: string) => compute(bcrypt => bcrypt.verify(password, hash))

  // One dummy hash per hashing function in use, so its cost matches the real hashes (shared by
  // both views below: without host handlers they use the same one).
  const dummies = new WeakMap<object, Promise<string>>()

  /** The operations, with the host's handlers of `handlers()` where it registered them. */
  const operations = (handlers: () => PasswordHandlers | undefined): BcryptHasher => {
    const hash = async (password: string): Promise<string> => {
      const custom = handlers()?.hashPassword
      const hashed = custom ? await custom(password) : await builtInHash(password)
      if (typeof hashed !== 'string' || !hashed) throw new Error('hashPassword returned no hash')
      return hashed
    }
    const verify = async (password: string, hashed: string): Promise<boolean> => {
      if (typeof hashed !== 'string' || !hashed) return false
      const custom = handlers()?.verifyPassword
      if (!custom) {
        // False for a wrong password or an unreadable hash; an engine that could not compute
        // rejects (a 500 for the request, logged), so it never reads as a wrong password.
        return (await builtInVerify(password, hashed)) === true
      }
      try {
        return (await custom(password, hashed)) === true
      }
      catch {
        return false
      }
    }

    const dummyHash = (): Promise<string> => {
      const source = handlers()?.hashPassword ?? builtInHash
      let pending = dummies.get(source)
      if (!pending) {
        pending = hash(randomToken(18))
        dummies.set(source, pending)
      }
      const made = pending
      // A failed dummy is made again by the next caller. Forgotten by whoever awaits it, not only
      // by the request that started it: on Workers a computation whose request was cancelled
      // never settles for that request, while the others awaiting it see it rejected.
      return made.catch((error: unknown) => {
        if (dummies.get(source) === made) dummies.delete(source)
        throw error
      })
    }

    const verifyDummy = async (password: string): Promise<false> => {
      await verify(password, await dummyHash())
      return false
    }

    return {
      hash,
      verify,
      verifyDummy,
      async verifyFirst(candidates, hashed, work = Math.max(1, candidates.length)) {
        for (let i = 0; i < work; i++) {
          const candidate = candidates[i]
          if (hashed !== null && candidate !== undefined) {
            if (await verify(candidate, hashed)) return true
          }
          else {
            await verifyDummy(candidate ?? '')
          }
        }
        return false
      },
      async warmUp() {
        await dummyHash()
      },
    }
  }

  return { ...operations(options.handlers), bcrypt: operations(() => undefined) }
}
