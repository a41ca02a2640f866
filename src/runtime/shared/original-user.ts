import type { AuthClaims, OriginalUser } from '../types/auth'

/** While impersonating, the requester as the `impersonation` claim names them (`sub`, `email`, `name`); else null. */
export function originalUserOf(claims: AuthClaims | null | undefined): OriginalUser | null {
  const context = claims?.impersonation
  if (typeof context?.originalUserSub !== 'string') return null
  // JSON and the tests' `toEqual` leave the undefined ones out.
  return { sub: context.originalUserSub, email: context.originalUserEmail, name: context.originalUserName }
}
