import type { H3Event } from 'h3'
import { isEvent } from 'h3'
import type { AuthUser, CustomClaims } from '../../types/auth'
import { createAuthCode } from '../lib/core/records/auth-code'
import { subjectOf } from '../lib/core/subject'
import { resolveGlobalClaims } from '../lib/core/session-tokens'
import { useAuthContext } from './auth-context'

export interface AuthorizationCodeOptions {
  /** Provider name written into the `provider` claim. */
  provider?: string
  /** Custom claims resolved by the login flow (the global `customClaims` handler is applied over them). */
  claims?: CustomClaims
  /** Same-origin path the callback page goes to after the exchange. */
  redirect?: string
  /**
   * Bind the code to this browser with a short-lived HttpOnly cookie, so a leaked code logs no other
   * browser in. `false` (non-browser clients only; never in a URL) reopens login CSRF and code injection.
   * @default true
   */
  bindToBrowser?: boolean
  /**
   * A native app's PKCE S256 challenge: the code is bound to it instead of the browser, and only the native
   * token endpoint (`POST <authPath>/native/token` with its verifier) exchanges it (`native` set).
   */
  codeChallenge?: string
}

/**
 * Issues a single-use authorization code (exchanged at POST /auth/token) for a user a custom login
 * flow has proven: `createAuthorizationCode(event, { sub: user.id })`. No second factor is asked here.
 */
export async function createAuthorizationCode(event: H3Event, user: AuthUser, options: AuthorizationCodeOptions = {}): Promise<string> {
  if (!isEvent(event)) {
    throw new TypeError('createAuthorizationCode(event, user, options): the first argument must be the request event (the code is bound to its browser).')
  }
  const ctx = await useAuthContext()
  if (!subjectOf(user)) throw new Error('createAuthorizationCode: the user needs a `sub` or `id`')
  const claims = await resolveGlobalClaims(ctx, user, options.claims ?? {})
  return createAuthCode(ctx, event, { user, claims, provider: options.provider, redirect: options.redirect, codeChallenge: options.codeChallenge }, { bindToBrowser: options.bindToBrowser })
}
