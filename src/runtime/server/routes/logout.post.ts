import { revokeRefreshToken } from '../lib/core/records/refresh-token'
import { guarded } from '../lib/edge/route-contract'
import { clearRefreshCookie, clearTossedRefreshCookies, refreshCookieValues } from '../lib/core/session-tokens'
import { defineAuthRoute } from '../utils/auth-context'
import { CORE_ROUTES } from '../core-routes'

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

/**
 * Any token of the session ends it: the current one, or an older one rotated since (so the owner
 * of a stolen and rotated cookie still logs the thief out). With several refresh cookies (one
 * planted by another host), the session of each (the last {@link MAX_COOKIES}) ends, and every
 * one is deleted where the server can.
 */
export default defineAuthRoute(guarded(CORE_ROUTES.logout, async (ctx, event) => {
  const cookies = refreshCookieValues(event, ctx)
  const tokens = [...new Set(cookies.filter(cookie => TOKEN.test(cookie)))].slice(-MAX_COOKIES)
  for (const cookie of tokens) {
    const revoked = await revokeRefreshToken(ctx, cookie)
    if (revoked) ctx.logger.security('logout', { family: revoked.family })
  }
  if (cookies.length > 1) clearTossedRefreshCookies(event, ctx)
  else clearRefreshCookie(event, ctx)
  return { success: true as const }
}))
