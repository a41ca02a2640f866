import type { AuthClaims } from '../../../types/auth'

/** How many verified tokens one process remembers (oldest forgotten first). */
const VERIFIED_CACHE_SIZE = 5000
/** Longer tokens are verified every time instead of being remembered. */
const VERIFIED_CACHE_MAX_TOKEN_LENGTH = 4096

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner)
    Object.freeze(value)
  }
  return value
}

/** Tokens that passed verification in this process, until they expire. */
export interface VerifiedTokenCache {
  /** Claims (a copy) of `token` when it passed verification and has not expired since. */
  get(token: string): AuthClaims | undefined
  /** Remembers the claims of a token that passed every check of verification. */
  set(token: string, claims: AuthClaims): void
}

/**
 * Verified tokens until they expire (a signature checked once per process); a hit re-checks `exp`/`nbf`
 * and compares the whole token, so a reused signature misses.
 */
export function createVerifiedCache(clockToleranceSeconds: number): VerifiedTokenCache {
  const entries = new Map<string, { token: string, claims: AuthClaims }>()
  const signatureOf = (token: string) => token.slice(token.lastIndexOf('.') + 1)
  return {
    get(token: string): AuthClaims | undefined {
      const signature = signatureOf(token)
      const entry = entries.get(signature)
      if (!entry || entry.token !== token) {
        return undefined
      }
      const { claims } = entry
      const now = Math.floor(Date.now() / 1000)
      const expired = typeof claims.exp !== 'number' || now > claims.exp + clockToleranceSeconds
      const early = typeof claims.nbf === 'number' && now + clockToleranceSeconds < claims.nbf
      if (expired || early) {
        entries.delete(signature)
        return undefined
      }
      return { ...claims }
    },
    set(token: string, claims: AuthClaims): void {
      if (token.length > VERIFIED_CACHE_MAX_TOKEN_LENGTH) {
        return
      }
      if (entries.size >= VERIFIED_CACHE_SIZE) {
        const oldest = entries.keys().next().value
        if (oldest !== undefined) entries.delete(oldest)
      }
      entries.set(signatureOf(token), { token, claims: deepFreeze({ ...claims }) })
    },
  }
}
