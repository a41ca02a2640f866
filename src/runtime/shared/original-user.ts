import type { AuthClaims, OriginalUser } from '../types/auth'

/** While impersonating, the requester as the `impersonation` claim names them (`sub`, `email`, `name`); else null. */
export function originalUserOf(claims: AuthClaims | null | undefined): OriginalUser | null {
  const context = claims?.impersonation
  if (!context || typeof context.originalUserSub !== 'string') return null
  return {
    sub: context.originalUserSub,
    ...(context.originalUserEmail ? { email: context.originalUserEmail } : {}),
    ...(context.originalUserName ? { name: context.originalUserName } : {}),
  }
}
