import type { H3Event } from 'h3'
import { getRequestHeader } from 'h3'
import type { AuthClaims, CustomClaims, ImpersonationContext } from '../../types/auth'
import { RESERVED_CLAIMS, sanitizeCustomClaims } from './claims'
import type { AuthContext } from './context'
import { requestAddress } from './rate-limit'

/** Claims that describe identity or the token itself, not custom data. */
const STANDARD_CLAIMS = new Set<string>([...RESERVED_CLAIMS, 'email', 'name', 'picture', 'provider'])

/** The custom claims of a token (everything but identity and token claims). */
export function customClaimsOf(claims: Record<string, unknown>): CustomClaims {
  const custom: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(claims)) {
    if (!STANDARD_CLAIMS.has(key)) custom[key] = value
  }
  return sanitizeCustomClaims(custom)
}

/** Identity of a claims object (`sub`, `email`, `name`, `picture`, `provider`) when they are strings. */
export function identityOf(claims: Record<string, unknown>): { sub?: string, email?: string, name?: string, picture?: string, provider?: string } {
  const pick = (key: string) => (typeof claims[key] === 'string' && claims[key] ? claims[key] as string : undefined)
  const sub = typeof claims.sub === 'number' ? String(claims.sub) : pick('sub')
  return { sub, email: pick('email'), name: pick('name'), picture: pick('picture'), provider: pick('provider') }
}

/** The `impersonation` claim of a token issued for `requester`. */
export function impersonationContext(requester: AuthClaims, lookupClaim: string, reason: string | undefined, now: Date): ImpersonationContext {
  const lookup = requester[lookupClaim]
  return {
    originalUserSub: requester.sub,
    originalUserLookupId: typeof lookup === 'string' || typeof lookup === 'number' ? String(lookup) : requester.sub,
    ...(typeof requester.email === 'string' ? { originalUserEmail: requester.email } : {}),
    ...(typeof requester.name === 'string' ? { originalUserName: requester.name } : {}),
    impersonatedAt: now.toISOString(),
    ...(reason ? { reason } : {}),
    originalClaims: customClaimsOf(requester),
  }
}

/**
 * Client address (the same one rate limits use: X-Forwarded-For only from trusted proxies) and
 * user agent, for the audit hooks.
 */
export function requestOrigin(event: H3Event, ctx: AuthContext): { ip: string, userAgent: string } {
  return {
    ip: requestAddress(event, ctx.options.rateLimit),
    userAgent: getRequestHeader(event, 'user-agent') ?? '',
  }
}
