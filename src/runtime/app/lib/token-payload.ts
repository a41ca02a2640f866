import type { AuthClaims } from '../../types/auth'

/** The payload of a JWT the server just gave, unverified; null unless a JSON object with a subject. */
export function decodeTokenClaims(token: unknown): AuthClaims | null {
  const payload = typeof token === 'string' ? token.split('.') : []
  if (payload.length !== 3 || !/^[\w-]+$/.test(payload[1]!)) return null
  try {
    // atob accepts the missing padding and refuses impossible lengths (4n + 1).
    const bytes = Uint8Array.from(atob(payload[1]!.replace(/-/g, '+').replace(/_/g, '/')), char => char.charCodeAt(0))
    const claims: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
    // Only an object can carry a string `sub` (arrays, strings and numbers have none).
    const sub = (claims as { sub?: unknown } | null)?.sub
    return typeof sub === 'string' && sub ? claims as AuthClaims : null
  }
  catch {
    return null
  }
}

/** The user of an access token: its claims without the token and session identifiers, or null. */
export function userFromToken(token: unknown): AuthClaims | null {
  const claims = decodeTokenClaims(token)
  if (!claims) return null
  const { jti, sid, ...user } = claims
  return user
}
