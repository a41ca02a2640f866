import { authError } from '../lib/edge/errors'
import { refreshLifetime, rotateRefreshToken } from '../lib/core/records/refresh-token'
import { requestRefused, securityEvent } from '../lib/edge/security-event'
import { guarded } from '../lib/edge/route-contract'
import { clearRefreshCookie, clearSessionPresence, clearTossedRefreshCookies, mintSessionToken, readRefreshCookie, refreshCookieValues, resolveGlobalClaims, setRefreshCookie } from '../lib/core/session-tokens'
import { defineAuthRoute } from '../utils/auth-context'
import { CORE_ROUTES } from '../core-routes'

/** Uses of the old cookie within `reuseGracePeriod` get the same successor; a 401 deletes the presence flag. */
export default defineAuthRoute(guarded(CORE_ROUTES.refresh, async (ctx, event) => {
  if (!ctx.options.tokenRefresh.enabled) throw authError('not_found', 'Token refresh is disabled')
  if (refreshCookieValues(event, ctx).length > 1) {
    // Cookies planted by a sibling domain (cookie tossing), or left by an older path.
    await requestRefused(ctx, event, 'cookie_conflict')
    clearTossedRefreshCookies(event, ctx)
    throw authError('refresh_cookie_conflict')
  }
  const cookie = readRefreshCookie(event, ctx)
  if (!cookie) {
    // A flag without a cookie is deleted, only the flag: another tab's new refresh cookie must survive.
    clearSessionPresence(event, ctx)
    throw authError('invalid_refresh_token', 'Missing refresh token')
  }

  const result = await rotateRefreshToken(ctx, cookie, { rotate: record => !record.impersonation, event })
  if (result.status === 'reused') {
    await securityEvent(ctx, event, { type: 'refresh.reused', outcome: 'failure', actor: null, subject: result.userId, session: result.family })
    clearRefreshCookie(event, ctx)
    throw authError('refresh_token_reused')
  }
  if (result.status === 'invalid') {
    clearRefreshCookie(event, ctx)
    throw authError('invalid_refresh_token')
  }
  if (result.record.impersonation) {
    throw authError('impersonated_session', 'Impersonated sessions cannot be refreshed')
  }
  const claims = await resolveGlobalClaims(ctx, result.record.user, result.record.claims)
  const { token, expiresIn } = await mintSessionToken(ctx, result.record, claims)
  if (result.token) setRefreshCookie(event, ctx, result.token, refreshLifetime(ctx, result.record))
  // Off the hot path unless asked for: a refresh is the module's most frequent request.
  if (ctx.options.audit?.refreshes) await securityEvent(ctx, event, { type: 'session.refreshed', actor: result.record.userId, session: result.record.family })
  return { success: true, message: 'Token refreshed', token, accessToken: token, expiresIn }
}))
