import type { AuthRouteRule } from '../../../types/auth'
import { resolveAuthValue } from '../../../shared/auth-value'

export type ResolvedAuthRule = 'required' | 'public' | undefined

/**
 * The `auth` route rule: `'required'`, `'public'`, or undefined (no rule, and `'guest'`, which only page meta
 * takes). An object (a permission or a role, `AuthAccessRule`) is `'required'`, checked further by the caller.
 */
export function resolveAuthRule(value: AuthRouteRule | unknown): ResolvedAuthRule {
  const requirement = resolveAuthValue(value)
  if (requirement === undefined) return typeof value === 'object' && value !== null ? 'required' : undefined
  return requirement === 'guest' ? undefined : requirement
}

/** RFC 6750 `b64token`. */
const TOKEN68 = /^[\w\-.~+/]+=*$/

/** The text after `Bearer` in an `Authorization` header, trimmed and unchecked, or undefined. */
export function bearerCandidate(header: string | undefined | null): string | undefined {
  if (!header || header.length < 8 || header.slice(0, 6).toLowerCase() !== 'bearer') return undefined
  if (header[6] !== ' ' && header[6] !== '\t') return undefined
  let start = 7
  let end = header.length
  while (start < end && (header[start] === ' ' || header[start] === '\t')) start++
  while (end > start && (header[end - 1] === ' ' || header[end - 1] === '\t')) end--
  return start < end ? header.slice(start, end) : undefined
}

/** The token of an `Authorization: Bearer <token>` header (RFC 6750), or undefined. */
export function parseBearer(header: string | undefined | null): string | undefined {
  const token = bearerCandidate(header)
  return token !== undefined && TOKEN68.test(token) ? token : undefined
}
