import type { AuthUser } from '../../../../types/auth'

const SENSITIVE_KEY = /password|passwd|secret|^hash$|hashed|token/i

/** A copy of the user safe to store: password hashes, secrets, provider tokens and non-JSON values dropped at every depth. */
export function storableUser(user: AuthUser): AuthUser {
  return JSON.parse(JSON.stringify(strip(user))) as AuthUser
}

function strip(value: unknown): unknown {
  if (value instanceof Date) return value.toJSON()
  if (Array.isArray(value)) return value.map(strip)
  if (!value || typeof value !== 'object') return value
  const out: Record<string, unknown> = {}
  for (const [key, inner] of Object.entries(value)) {
    if (SENSITIVE_KEY.test(key) || inner === undefined || typeof inner === 'function' || typeof inner === 'bigint' || typeof inner === 'symbol') continue
    out[key] = strip(inner)
  }
  return out
}
