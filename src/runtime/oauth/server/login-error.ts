/** Where a provider login goes when it fails or returns elsewhere: the error page, a native app, the page of a link. */
import type { H3Event } from 'h3'
import { sendRedirect } from 'h3'
import * as oauth from 'oauth4webapi'
import type { OAuthEventHandlerOptions } from '../oauth-types'
import type { AuthContext, IdentityLinkRequest } from '../../server/lib/core/context'
import { refusalWindow, securityEvent } from '../../server/lib/edge/security-event'
import { withQueryParams } from '../../server/lib/edge/redirect'
import type { OAuthLoginError } from './exchange'
import type { NativeReturn } from './oauth-state'

/** Where a login returns once its state record is taken: a native app's, or a link's page. */
export interface LoginReturn {
  native?: NativeReturn
  link?: IdentityLinkRequest
}

/** The native app's redirect URI with `params` and the app's `state` added to its query. */
export function nativeLocation(app: Pick<NativeReturn, 'redirectUri' | 'state'>, params: Record<string, string>): string {
  const url = new URL(app.redirectUri)
  for (const [key, value] of Object.entries({ ...params, ...(app.state === undefined ? {} : { state: app.state }) })) url.searchParams.set(key, value)
  return url.href
}

/**
 * Ends a failed login: the host's onError (a failure is logged), then 302 to `redirect.error` (a native app's
 * login: to its redirect URI; a link: to its page with `?error=<code>`) unless onError answered.
 */
export async function sendLoginError(event: H3Event, ctx: AuthContext, provider: string, handlers: OAuthEventHandlerOptions<unknown>, failure: OAuthLoginError, back: LoginReturn = {}): Promise<void> {
  // Anyone can call a callback with a made-up state: one event per provider, reason and client each 5 minutes.
  await securityEvent(ctx, event, { type: 'login', outcome: 'failure', actor: null, details: { provider, reason: failure.code, stage: failure.stage }, aggregate: refusalWindow(ctx, event, `${provider}\0${failure.code}`) })
  if (failure.code === 'server_error') ctx.logger.error(`Login with ${provider} failed unexpectedly`, failure.reason)
  else if (failure.reason !== undefined) ctx.logger.warn(`Login with ${provider} failed (${failure.code})`, describeCause(failure.reason))
  if (handlers.onError) {
    try {
      await handlers.onError({ provider, error: failure.code, errorDescription: failure.description, stage: failure.stage, cause: failure.reason, event })
    }
    catch (error) {
      ctx.logger.error(`onError of ${provider} failed`, error)
    }
  }
  if (event.handled) return
  const params = { error: failure.code, error_description: failure.description }
  const location = back.native ? nativeLocation(back.native, params) : back.link ? withQueryParams(back.link.redirect, { error: failure.code }) : withQueryParams(ctx.options.redirect.error, params)
  await sendRedirect(event, location, 302)
}

/** A short server-side description of a failure (no response bodies or tokens). */
function describeCause(cause: unknown): string {
  if (cause instanceof oauth.ResponseBodyError) return `${cause.error}${cause.error_description ? `: ${cause.error_description}` : ''} (HTTP ${cause.status})`
  if (cause instanceof Error) return cause.message
  return String(cause)
}
