import type { AuthRouteRule } from '../../types/auth'

export type ResolvedAuthRule = 'required' | 'public' | undefined

const REQUIRED = new Set<unknown>([true, 'required', 'protected'])
const PUBLIC = new Set<unknown>([false, 'public', 'skip'])

/**
 * Normalises the `auth` value of route rules: `true | 'required' | 'protected'` need a valid
 * bearer token, `false | 'public' | 'skip'` do not; anything else (no rule) is undefined.
 */
export function resolveAuthRule(value: AuthRouteRule | unknown): ResolvedAuthRule {
  if (REQUIRED.has(value)) return 'required'
  if (PUBLIC.has(value)) return 'public'
  return undefined
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function parseBearer(header: string | undefined | null): string | undefined {
  if (!header) return undefined
  const match = /^Bearer[ \t]+([\w\-.~+/]+=*)[ \t]*$/i.exec(header)
  return match?.[1]
}
