/**
 * POST /auth/logout (endpoints.logoutPath)
 * No body; revokes the session of the refresh cookie and deletes the cookie. Any token of the
 * session ends it: the current one, or an older one that was rotated since (so the owner of a
 * stolen and rotated cookie still logs the thief out). A request with several refresh cookies (one
 * planted by another host) ends the session of each, and deletes every one where the server can.
 * 200 `{ success: true }`, also without a cookie or when called again.
 * 403 cross_origin_request · 413 payload_too_large
 */
import { revokeRefreshToken } from '../lib/records/refresh-token'
import { refuseCrossOrigin } from '../lib/request-guards'
import { clearRefreshCookie, clearTossedRefreshCookies, refreshCookieValues } from '../lib/session'
import { defineAuthRoute } from '../utils/context'

/** Refresh cookies a logout looks at (a browser sends one per domain and path that set one). */
const MAX_COOKIES = 4

export default defineAuthRoute(async (event, ctx) => {
  refuseCrossOrigin(event, ctx)
  const cookies = refreshCookieValues(event, ctx)
  for (const cookie of cookies.slice(0, MAX_COOKIES)) {
    if (!cookie || cookie.length > 512) continue
    const revoked = await revokeRefreshToken(ctx, cookie)
    if (revoked) ctx.logger.security('logout', { family: revoked.family })
  }
  if (cookies.length > 1) clearTossedRefreshCookies(event, ctx)
  else clearRefreshCookie(event, ctx)
  return { success: true as const }
})
