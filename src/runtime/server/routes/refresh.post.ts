import { authError, message } from '../lib/edge/errors'
import { refreshLifetime } from '../lib/core/records/refresh-token'
import { refreshSession } from '../lib/core/grants'
import { requestRefused } from '../lib/edge/security-event'
import { guarded } from '../lib/edge/route-contract'
import { clearRefreshCookie, clearSessionPresence, clearTossedRefreshCookies, readRefreshCookie, refreshCookieValues, setRefreshCookie } from '../lib/core/session-tokens'
import { defineAuthRoute } from '../utils/auth-context'
import { CORE_ROUTES } from '../core-routes'

/** Uses of the old cookie within `reuseGracePeriod` get the same successor; a 401 deletes the presence flag. */
export default defineAuthRoute(guarded(CORE_ROUTES.refresh, async (ctx, event) => {
  if (!ctx.options.tokenRefresh.enabled) throw authError('not_found', message('token_refresh_disabled'))
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
    throw authError('invalid_refresh_token', message('missing_refresh_token'))
  }
  const { token, expiresIn, record, refreshToken } = await refreshSession(ctx, event, cookie, { channel: 'cookie', onEnded: () => clearRefreshCookie(event, ctx) })
  if (refreshToken) setRefreshCookie(event, ctx, refreshToken, refreshLifetime(ctx, record))
  return { success: true, message: 'Token refreshed', token, accessToken: token, expiresIn }
}))
