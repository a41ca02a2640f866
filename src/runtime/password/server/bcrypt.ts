import { workerThreadsAvailable } from '../../server/lib/config/platform'
import type { BcryptEngine } from './bcrypt-engine'

export type { BcryptEngine } from './bcrypt-engine'

export interface NativeBcrypt {
  hash(password: string, options: { cost: number }): Promise<string>
  verify(password: string, hash: string): Promise<boolean>
}

/** Environment variable: `js` forces bcryptjs in worker threads (to reproduce a platform without native addons). */
export const BCRYPT_ENV = 'NUXT_SVC_AUTH_BCRYPT'

export function bcryptPreference(env: Record<string, string | undefined> = process.env): 'native' | 'js' {
  return env[BCRYPT_ENV]?.trim().toLowerCase() === 'js' ? 'js' : 'native'
}

export async function loadNativeBcrypt(): Promise<NativeBcrypt> {
  const loaded = await import('@node-rs/bcrypt') as Partial<NativeBcrypt> & { default?: Partial<NativeBcrypt>, unavailable?: unknown }
  // The stand-in of edge builds (bcrypt-unavailable.ts) says why there is no addon.
  if ('unavailable' in loaded && typeof loaded.unavailable === 'string') throw new Error(loaded.unavailable)
  const native = typeof loaded.hash === 'function' ? loaded : loaded.default
  if (typeof native?.hash !== 'function' || typeof native.verify !== 'function') throw new Error('@node-rs/bcrypt has no hash/verify')
  return native as NativeBcrypt
}

export interface BcryptEngineOptions {
  /** Most worker threads of the fallback. */
  workers: number
  /** Reports the fallback, once. */
  warn(message: string): void
  prefer?: 'native' | 'js'
  loadNative?: () => Promise<NativeBcrypt>
  /** Whether worker threads can be started (else bcryptjs in this thread). */
  threads?: boolean
}

interface Bcryptjs {
  hash(password: string, cost: number): Promise<string>
  compare(password: string, hash: string): Promise<boolean>
}

/** Loads bcryptjs in this thread: this import makes Nitro trace it into the output for the workers. */
async function loadBcryptjs(): Promise<Bcryptjs> {
  const loaded = await import('bcryptjs') as Partial<Bcryptjs> & { default?: Partial<Bcryptjs> }
  const bcryptjs = typeof loaded.hash === 'function' ? loaded : loaded.default
  if (typeof bcryptjs?.hash !== 'function' || typeof bcryptjs.compare !== 'function') throw new Error('bcryptjs has no hash/compare')
  return bcryptjs as Bcryptjs
}

/** bcryptjs in this thread through its async API, for runtimes without threads (Workers). */
export async function createInlineEngine(load: () => Promise<Bcryptjs> = loadBcryptjs): Promise<BcryptEngine> {
  const bcryptjs = await load()
  return {
    kind: 'inline',
    hash: (password, cost) => bcryptjs.hash(password, cost),
    verify: async (password, hash) => {
      try {
        return (await bcryptjs.compare(password, hash)) === true
      }
      catch {
        return false
      }
    },
    close: async () => {},
  }
}

function nativeEngine(native: NativeBcrypt): BcryptEngine {
  return {
    kind: 'native',
    hash: (password, cost) => native.hash(password, { cost }),
    // The addon rejects only a hash it cannot read: no match.
    verify: (password, hash) => native.verify(password, hash).catch(() => false),
    close: async () => {},
  }
}

/** `@node-rs/bcrypt`, else (or with {@link BCRYPT_ENV} `js`) bcryptjs in worker threads, else (no threads) bcryptjs in this thread. */
export async function createBcryptEngine(options: BcryptEngineOptions): Promise<BcryptEngine> {
  if (!(options.threads ?? workerThreadsAvailable())) return createInlineEngine()
  const prefer = options.prefer ?? bcryptPreference()
  if (prefer === 'js') {
    options.warn(`${BCRYPT_ENV}=js: passwords are hashed with bcryptjs in worker threads instead of @node-rs/bcrypt`)
    return workerEngine(options.workers)
  }
  try {
    return nativeEngine(await (options.loadNative ?? loadNativeBcrypt)())
  }
  catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0]
    options.warn(`@node-rs/bcrypt could not be loaded (${reason}): passwords are hashed with bcryptjs in worker threads`)
    return workerEngine(options.workers)
  }
}

async function workerEngine(size: number): Promise<BcryptEngine> {
  await loadBcryptjs()
  // Loaded only here: node:worker_threads and node:fs exist on Node, not on Workers.
  const { createWorkerEngine } = await import('./bcrypt-worker')
  return createWorkerEngine({ size })
}
