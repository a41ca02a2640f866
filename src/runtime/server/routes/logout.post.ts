import { revokeRefreshToken } from '../lib/core/records/refresh-token'
import { guarded } from '../lib/edge/route-contract'
import { clearRefreshCookie, clearTossedRefreshCookies, refreshCookieValues } from '../lib/core/session-tokens'
import { defineAuthRoute } from '../utils/auth-context'
import { CORE_ROUTES } from '../core-routes'

/**
 * Refresh cookies a logout ends at most: the last ones, since cookies a sibling domain planted on
 * longer paths are sent before the site's own and must not push it out.
 */
const MAX_COOKIES = 16
/** A refresh token (32 random bytes, base64url): nothing else is looked up. */
const TOKEN = /^[\w-]{43}$/

/** Any token of the session ends it, also one rotated since (the owner of a stolen cookie logs the thief out). */
export default defineAuthRoute(guarded(CORE_ROUTES.logout, async (ctx, event) => {
  const cookies = refreshCookieValues(event, ctx)
  const tokens = [...new Set(cookies.filter(cookie => TOKEN.test(cookie)))].slice(-MAX_COOKIES)
  // Each session ended is reported as a `logout` (revokeFamily).
  for (const cookie of tokens) await revokeRefreshToken(ctx, cookie, event)
  if (cookies.length > 1) clearTossedRefreshCookies(event, ctx)
  else clearRefreshCookie(event, ctx)
  return { success: true as const }
}))
