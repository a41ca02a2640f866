import type { AuthUser, CustomClaims } from '../../types/auth'
import { createAuthCode } from '../lib/records/auth-code'
import { subjectOf } from '../lib/records/user'
import { resolveGlobalClaims } from '../lib/session'
import { useAuthContext } from './context'

export interface AuthorizationCodeOptions {
  /** Provider name written into the `provider` claim. */
  provider?: string
  /** Custom claims resolved by the login flow (the global `customClaims` handler is applied over them). */
  claims?: CustomClaims
  /** Same-origin path the callback page goes to after the exchange. */
  redirect?: string
}

/**
 * Issues a single-use authorization code for a user who has just proven who they are; the
 * browser exchanges it at POST /auth/token. For custom login flows of the host application.
 */
export async function createAuthorizationCode(user: AuthUser, options: AuthorizationCodeOptions = {}): Promise<string> {
  const ctx = await useAuthContext()
  if (!subjectOf(user)) throw new Error('createAuthorizationCode: the user needs a `sub` or `id`')
  const claims = await resolveGlobalClaims(ctx, user, options.claims ?? {})
  return createAuthCode(ctx, { user, claims, provider: options.provider, redirect: options.redirect })
}
