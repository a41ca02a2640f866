/** One bcrypt implementation. Hashes of each verify with the others (standard `$2b$`). */
export interface BcryptEngine {
  /**
   * `native`: `@node-rs/bcrypt` on the libuv thread pool; `worker`: bcryptjs in worker threads;
   * `inline`: bcryptjs in the current thread (runtimes without threads: Cloudflare Workers).
   */
  readonly kind: 'native' | 'worker' | 'inline'
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
