import { createWorkerEngine } from './bcrypt-worker'

/** One bcrypt implementation. Hashes of each verify with the other (standard `$2b$`). */
export interface BcryptEngine {
  /** `native`: `@node-rs/bcrypt` on the libuv thread pool; `worker`: bcryptjs in worker threads. */
  readonly kind: 'native' | 'worker'
  hash(password: string, cost: number): Promise<string>
  /**
   * False for a wrong password and for a hash that is not a bcrypt hash. Rejects only when the
   * engine could not compute (bcryptjs could not be loaded, a worker thread stopped): that is no
   * answer about the password, and must not read as a wrong one.
   */
  verify(password: string, hash: string): Promise<boolean>
  /** Stops the threads the engine started (none for `native`). */
  close(): Promise<void>
}

/** The part of `@node-rs/bcrypt` the engine uses. */
export interface NativeBcrypt {
  hash(password: string, options: { cost: number }): Promise<string>
  verify(password: string, hash: string): Promise<boolean>
}

/**
 * Environment variable that chooses the implementation: `js` uses bcryptjs in worker threads even
 * where `@node-rs/bcrypt` loads (to reproduce a platform without native addons). Read when the
 * password provider first hashes.
 */
export const BCRYPT_ENV = 'NUXT_SVC_AUTH_BCRYPT'

/** `js` when {@link BCRYPT_ENV} asks for bcryptjs, else `native`. */
export function bcryptPreference(env: Record<string, string | undefined> = process.env): 'native' | 'js' {
  return env[BCRYPT_ENV]?.trim().toLowerCase() === 'js' ? 'js' : 'native'
}

/**
 * Loads `@node-rs/bcrypt` (a native addon: it fails where addons cannot load, such as
 * WebContainers, or on a platform without a prebuilt binary).
 */
export async function loadNativeBcrypt(): Promise<NativeBcrypt> {
  const loaded = await import('@node-rs/bcrypt') as Partial<NativeBcrypt> & { default?: Partial<NativeBcrypt> }
  const native = typeof loaded.hash === 'function' ? loaded : loaded.default
  if (typeof native?.hash !== 'function' || typeof native.verify !== 'function') throw new Error('@node-rs/bcrypt has no hash/verify')
  return native as NativeBcrypt
}

/** Options of {@link createBcryptEngine}. */
export interface BcryptEngineOptions {
  /** Most worker threads of the fallback (the hasher's concurrency). */
  workers: number
  /** Reports the fallback, once, in one line (the module's logger). */
  warn(message: string): void
  /** @default bcryptPreference() */
  prefer?: 'native' | 'js'
  /** @default loadNativeBcrypt */
  loadNative?: () => Promise<NativeBcrypt>
}

/**
 * Loads bcryptjs in this thread: it must be installed, and this import is what makes Nitro trace
 * it into the built output, where the worker threads load it from. (A runtime without worker
 * threads would hash with this module in the thread; no such build exists yet.)
 */
async function requireBcryptjs(): Promise<void> {
  await import('bcryptjs')
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

/**
 * The bcrypt implementation of the process: `@node-rs/bcrypt`, or, when it cannot load (or
 * {@link BCRYPT_ENV} is `js`), bcryptjs in worker threads, so that the event loop keeps
 * answering either way.
 */
export async function createBcryptEngine(options: BcryptEngineOptions): Promise<BcryptEngine> {
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
  await requireBcryptjs()
  return createWorkerEngine({ size })
}
