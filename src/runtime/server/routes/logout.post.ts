/**
 * POST /auth/logout (endpoints.logoutPath)
 * No body; revokes the session of the refresh cookie and deletes the cookie. Any token of the
 * session ends it: the current one, or an older one that was rotated since (so the owner of a
 * stolen and rotated cookie still logs the thief out).
 * 200 `{ success: true }`, also without a cookie or when called again.
 * 403 cross_origin_request · 413 payload_too_large
 */
import { revokeRefreshToken } from '../lib/records/refresh-token'
import { refuseCrossOrigin } from '../lib/request-guards'
import { clearRefreshCookie, readRefreshCookie } from '../lib/session'
import { defineAuthRoute } from '../utils/context'

export default defineAuthRoute(async (event, ctx) => {
  refuseCrossOrigin(event, ctx)
  const cookie = readRefreshCookie(event, ctx)
  if (cookie) {
    const revoked = await revokeRefreshToken(ctx, cookie)
    if (revoked) ctx.logger.security('logout', { family: revoked.family })
  }
  clearRefreshCookie(event, ctx)
  return { success: true as const }
})
