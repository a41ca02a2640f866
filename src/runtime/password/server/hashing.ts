import type { PasswordHandlers } from '../../types/auth'
import { randomToken } from '../../server/lib/store/crypto'
import { createBcryptEngine, type BcryptEngine } from './bcrypt'

/** Limits how many tasks run at once; the others wait in order. */
export interface Semaphore {
  run<T>(task: () => Promise<T>): Promise<T>
  readonly active: number
  readonly waiting: number
}

/**
 * A semaphore of `limit` slots. A finished task hands its slot straight to the next waiting one, so
 * an arriving task cannot jump the queue and waiting tasks start in order without another tick.
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

/** bcrypt concurrency when `hashConcurrency` is 0: cores − 1, at least 1, below the libuv pool size. */
export function automaticHashConcurrency(cores: number, poolSize = Number(globalThis.process?.env?.UV_THREADPOOL_SIZE) || 4): number {
  return Math.max(1, Math.min(cores - 1, poolSize - 1))
}

export async function cpuCores(): Promise<number> {
  const cores = globalThis.navigator?.hardwareConcurrency
  if (typeof cores === 'number' && cores > 0) return cores
  return (await import('node:os')).availableParallelism()
}

/** Password hashing of the provider: bcrypt off the event loop, or the host's `hashPassword`/`verifyPassword`. */
export interface PasswordHasher {
  hash(password: string): Promise<string>
  /** False for a wrong password or an unreadable hash; rejects when bcrypt could not compute (a 500, never a silent false). */
  verify(password: string, hash: string): Promise<boolean>
  /** The work of {@link verify} against a random hash (always false), so an unknown user takes as long as a wrong password. */
  verifyDummy(password: string): Promise<false>
  /**
   * Checks the forms of a typed password against `hash` (null: unknown user), stopping at the first match.
   * Every non-match costs `work` hashes, so timing tells an unknown user, a wrong password and an unchecked one apart in no way.
   */
  verifyFirst(candidates: readonly string[], hash: string | null, work?: number): Promise<boolean>
  warmUp(): Promise<void>
  /** The same on the built-in bcrypt alone (never the host's handlers), in the same slots: for the server utils. */
  readonly bcrypt: BcryptHasher
}

/** {@link PasswordHasher} without the host's handlers: bcrypt only. */
export type BcryptHasher = Omit<PasswordHasher, 'bcrypt'>

export interface HasherOptions {
  rounds: number
  /** 0: automatic. */
  concurrency: number
  /** The host's handlers, read on every call (plugins may register them after startup). */
  handlers: () => PasswordHandlers | undefined
  warn?: (message: string) => void
  threads?: boolean
  engine?: (options: { workers: number, warn: (message: string) => void, threads?: boolean }) => Promise<BcryptEngine>
}

/**
 * The provider's hasher: bcrypt at `rounds`, at most `concurrency` at once (slots held only while bcrypt
 * computes), or the host's functions. An `inline` engine (Workers) takes no slot: a slot handed between
 * requests would tie each to the other's life.
 */
export function createPasswordHasher(options: HasherOptions): PasswordHasher {
  // Made on first use: an addon that cannot load fails there, not at import.
  let engine: Promise<{ bcrypt: BcryptEngine, limit: Semaphore | undefined }> | undefined
  const started = () => {
    const current = engine ??= (async () => {
      const slots = options.concurrency > 0 ? options.concurrency : automaticHashConcurrency(await cpuCores())
      const bcrypt = await (options.engine ?? createBcryptEngine)({ workers: slots, warn: options.warn ?? (message => console.warn(`[svc-auth] ${message}`)), threads: options.threads })
      return { bcrypt, limit: bcrypt.kind === 'inline' ? undefined : createSemaphore(slots) }
    })()
    // A failed engine is made again by the next call, and forgotten by whoever sees it fail (on Workers
    // the request that started it may never see it settle).
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

  // One dummy hash per hashing function in use, so its cost matches the real hashes.
  const dummies = new WeakMap<object, Promise<string>>()

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
      // An engine failure rejects (a 500), never reads as a wrong password.
      if (!custom) return (await builtInVerify(password, hashed)) === true
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
      // A failed dummy is made again by the next caller, forgotten by whoever awaits it (see the engine above).
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
          // No hash (an unknown account, or one without a password) costs what a wrong password costs.
          if (typeof hashed === 'string' && hashed !== '' && candidate !== undefined) {
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
