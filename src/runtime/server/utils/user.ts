import type { H3Event } from 'h3'
import type { AuthClaims } from '../../types/auth'
import { authenticate, authenticationError } from '../lib/core/authenticate'
import { useAuthContext } from './auth-context'

/** The authenticated user of the request (claims of its bearer token), or undefined. */
export async function getAuthUser(event: H3Event): Promise<AuthClaims | undefined> {
  return authenticate(event, await useAuthContext())
}

/**
 * The authenticated user, or a 401 `{ statusCode, message, error }` with `error`
 * `unauthorized` (no valid token) or `session_revoked` (the token's session has ended).
 */
export async function requireAuthUser(event: H3Event): Promise<AuthClaims> {
  const user = await getAuthUser(event)
  if (!user) throw authenticationError(event)
  return user
}
