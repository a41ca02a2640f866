import { getQuery, getRouterParam, sendRedirect } from 'h3'
import { authError, message } from '../../../server/lib/edge/errors'
import { guarded } from '../../../server/lib/edge/route-contract'
import { requestRefused } from '../../../server/lib/edge/security-event'
import { defineAuthRoute } from '../../../server/utils/auth-context'
import { runOAuthLogin } from '../../../oauth/server/event-handlers'
import { nativeLocation } from '../../../oauth/server/login-error'
import { providerOf } from '../../../oauth/server/provider-registry'
import { allowedRedirectUri } from '../native-options'
import { NATIVE_ROUTES, nativeLoginQuery } from '../native-routes'

/**
 * A native app's login in the system browser (RFC 8252): an unlisted `redirect_uri` answers 400 and is never
 * redirected to; once it is listed, every failure returns there with `error` and the app's `state`.
 */
export default defineAuthRoute(guarded(NATIVE_ROUTES.login, async (ctx, event) => {
  const query = getQuery(event)
  const name = getRouterParam(event, 'provider', { decode: true }) ?? ''
  const redirectUri = typeof query.redirect_uri === 'string' ? allowedRedirectUri(ctx.options, query.redirect_uri) : undefined
  if (!redirectUri) {
    await requestRefused(ctx, event, 'redirect', { details: { provider: name.slice(0, 64), native: true } })
    throw authError('invalid_request', message('redirect_uri_not_registered'))
  }
  const state = typeof query.state === 'string' && query.state.length <= 512 ? query.state : undefined
  const back = (error: string, description: string) => sendRedirect(event, nativeLocation({ redirectUri, state }, { error, error_description: description }), 302)
  const parsed = nativeLoginQuery.safeParse(query)
  if (!parsed.success) return back('invalid_request', 'A login needs PKCE: code_challenge with code_challenge_method=S256, and at most one state of 512 characters')
  try {
    providerOf(ctx, name, undefined)
  }
  catch {
    return back('invalid_request', 'Unknown login provider')
  }
  return runOAuthLogin(event, ctx, name, undefined, { redirectUri, codeChallenge: parsed.data.code_challenge, state })
}))
