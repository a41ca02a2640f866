import type { AuthClaims } from '../../types/auth'

/** A base64url segment decoded as UTF-8 text, or null when it is not valid base64url or UTF-8. */
function decodeSegment(segment: string): string | null {
  if (!/^[\w-]+$/.test(segment)) return null
  try {
    // atob accepts the missing padding and refuses impossible lengths (4n + 1).
    const bytes = Uint8Array.from(atob(segment.replace(/-/g, '+').replace(/_/g, '/')), char => char.charCodeAt(0))
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  }
  catch {
    return null
  }
}

/**
 * The payload of a JWT, without verifying it (the server verifies every token it receives; the
 * client only reads the claims of tokens the server just gave it). Null when it is not a compact
 * JWS (three segments) whose payload is a JSON object with a subject. The payload is read as
 * UTF-8, so non-ASCII names survive; no JWT library is shipped to the browser for this.
 */
export function decodeTokenClaims(token: unknown): AuthClaims | null {
  if (typeof token !== 'string') return null
  const segments = token.split('.')
  if (segments.length !== 3) return null
  const text = decodeSegment(segments[1]!)
  if (text === null) return null
  let claims: unknown
  try {
    claims = JSON.parse(text)
  }
  catch {
    return null
  }
  if (!claims || typeof claims !== 'object' || Array.isArray(claims)) return null
  const { sub } = claims as { sub?: unknown }
  return typeof sub === 'string' && sub ? claims as AuthClaims : null
}

/** The user as the app sees it: the token claims without the token and session identifiers. */
export function userFromClaims(claims: AuthClaims | null): AuthClaims | null {
  if (!claims) return null
  const { jti, sid, ...user } = claims
  return user
}

/** The user of an access token (see `userFromClaims`), or null. */
export function userFromToken(token: unknown): AuthClaims | null {
  return userFromClaims(decodeTokenClaims(token))
}
