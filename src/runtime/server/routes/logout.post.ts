/**
 * POST /auth/logout (endpoints.logoutPath)
 * No body; revokes the session of the refresh cookie and deletes the cookie. Any token of the
 * session ends it: the current one, or an older one that was rotated since (so the owner of a
 * stolen and rotated cookie still logs the thief out). A request with several refresh cookies (one
 * planted by another host) ends the session of each (the last 16), and deletes every one where the
 * server can.
 * 200 `{ success: true }`, also without a cookie or when called again.
 * 403 cross_origin_request · 413 payload_too_large
 */
import { revokeRefreshToken } from '../lib/core/records/refresh-token'
import { refuseCrossOrigin } from '../lib/edge/request-guards'
import { clearRefreshCookie, clearTossedRefreshCookies, refreshCookieValues } from '../lib/core/session-tokens'
import { defineAuthRoute } from '../utils/auth-context'

/**
 * Refresh cookies a logout ends at most. A browser sends one per domain and path that set one:
 * a sibling can plant one ahead of the site's own for each parent domain and each path above the
 * logout route (`/`, `/auth`, `/auth/`, `/auth/logout`: 4 per domain), and the site's own, whose
 * path is the shortest, comes last. The last ones are taken, so planted cookies sent first cannot
 * push the site's own out.
 */
const MAX_COOKIES = 16
/** A refresh token (32 random bytes, base64url): nothing else is looked up. */
const TOKEN = /^[\w-]{43}$/

export default defineAuthRoute(async (event, ctx) => {
  refuseCrossOrigin(event, ctx)
  const cookies = refreshCookieValues(event, ctx)
  const tokens = [...new Set(cookies.filter(cookie => TOKEN.test(cookie)))].slice(-MAX_COOKIES)
  for (const cookie of tokens) {
    const revoked = await revokeRefreshToken(ctx, cookie)
    if (revoked) ctx.logger.security('logout', { family: revoked.family })
  }
  if (cookies.length > 1) clearTossedRefreshCookies(event, ctx)
  else clearRefreshCookie(event, ctx)
  return { success: true as const }
})
