import { decodeJwt } from 'jose'
import type { AuthClaims } from '../../types/auth'

/** Claims kept out of `useAuth().user`: identifiers of the token and session, not of the user. */
const HIDDEN_CLAIMS: ReadonlySet<string> = new Set(['jti', 'sid'])

/**
 * The payload of a JWT, without verifying it (the server verifies every token it receives; the
 * client only reads the claims of tokens the server just gave it). Null when it is not a JWT.
 * jose's decoder reads the payload as UTF-8, so non-ASCII names survive.
 */
export function decodeTokenClaims(token: unknown): AuthClaims | null {
  if (typeof token !== 'string') return null
  try {
    const claims = decodeJwt(token)
    return typeof claims.sub === 'string' && claims.sub ? (claims as AuthClaims) : null
  }
  catch {
    return null
  }
}

/** The user as the app sees it: the token claims without the token and session identifiers. */
export function userFromClaims(claims: AuthClaims | null): AuthClaims | null {
  if (!claims) return null
  const user: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(claims)) {
    if (!HIDDEN_CLAIMS.has(key)) user[key] = value
  }
  return user as AuthClaims
}

/** The user of an access token (see `userFromClaims`), or null. */
export function userFromToken(token: unknown): AuthClaims | null {
  return userFromClaims(decodeTokenClaims(token))
}
