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
   * Bind the code to the browser that receives this answer (default `true`): the answer sets a
   * short-lived HttpOnly cookie, and POST /auth/token refuses the code without it, so a code
   * that leaks (a shared link, a log, a Referer) cannot log another browser in.
   *
   * `false` issues a bearer code that anyone holding it can exchange. Use it only for clients
   * that are not browsers (a CLI, a native app exchanging the code itself) and never hand such a
   * code to a browser through a URL: it reopens login CSRF and code injection.
   * @default true
   */
  bindToBrowser?: boolean
}

/**
 * Issues a single-use authorization code for a user who has just proven who they are; the
 * browser exchanges it at POST /auth/token. For custom login flows of the host application:
 *
 * ```ts
 * export default defineEventHandler(async (event) => {
 *   const user = await checkSomehow(event)
 *   return { code: await createAuthorizationCode(event, { sub: user.id, email: user.email }) }
 * })
 * ```
 *
 * The code is bound to the browser of `event` (see {@link AuthorizationCodeOptions.bindToBrowser}).
 *
 * No second factor is asked here, even with `twoFactor.enabled`: a flow of the host that logs in
 * a user who enrolled one must check it itself before calling this (see docs/two-factor.md).
 */
export async function createAuthorizationCode(event: H3Event, user: AuthUser, options: AuthorizationCodeOptions = {}): Promise<string> {
  if (!isEvent(event)) {
    throw new TypeError('createAuthorizationCode(event, user, options): the first argument must be the request event (the code is bound to its browser).')
  }
  const ctx = await useAuthContext()
  if (!subjectOf(user)) throw new Error('createAuthorizationCode: the user needs a `sub` or `id`')
  const claims = await resolveGlobalClaims(ctx, user, options.claims ?? {})
  return createAuthCode(ctx, event, { user, claims, provider: options.provider, redirect: options.redirect }, { bindToBrowser: options.bindToBrowser })
}
