/** One bcrypt implementation. Hashes of each verify with the others (standard `$2b$`). */
export interface BcryptEngine {
  /**
   * `native`: `@node-rs/bcrypt` on the libuv thread pool; `worker`: bcryptjs in worker threads;
   * `inline`: bcryptjs in the current thread (runtimes without threads: Cloudflare Workers).
   */
  readonly kind: 'native' | 'worker' | 'inline'
  hash(password: string, cost: number): Promise<string>
  /** False for a wrong password or a non-bcrypt hash; rejects only when the engine could not compute (never read as a wrong password). */
  verify(password: string, hash: string): Promise<boolean>
  close(): Promise<void>
}
