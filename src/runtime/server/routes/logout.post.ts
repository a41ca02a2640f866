/**
 * POST /auth/logout (endpoints.logoutPath)
 * No body; revokes the refresh token of the cookie (and its session) and deletes the cookie.
 * 200 `{ success: true }`, also without a cookie or when called again.
 * 403 forbidden (cross-site request)
 */
import { revokeRefreshToken } from '../lib/records/refresh-token'
import { clearRefreshCookie, refuseCrossSite, readRefreshCookie } from '../lib/session'
import { defineAuthRoute } from '../utils/context'

export default defineAuthRoute(async (event, ctx) => {
  refuseCrossSite(event)
  const cookie = readRefreshCookie(event, ctx)
  if (cookie) {
    const record = await revokeRefreshToken(ctx, cookie)
    if (record) ctx.logger.security('logout', { family: record.family })
  }
  clearRefreshCookie(event, ctx)
  return { success: true as const }
})
