import { readSessionRecord, revokeRefreshToken } from '../lib/core/records/refresh-token'
import { guarded } from '../lib/edge/route-contract'
import { clearRefreshCookie, clearTossedRefreshCookies, refreshCookieValues } from '../lib/core/session-tokens'
import type { AuthContext } from '../lib/core/context'
import type { UpstreamLogin } from '../lib/core/records/record-schema'
import { isError } from 'h3'
import { defineAuthRoute } from '../utils/auth-context'
import { CORE_ROUTES } from '../core-routes'

/**
 * Refresh cookies a logout ends at most: the last ones, since cookies a sibling domain planted on
 * longer paths are sent before the site's own and must not push it out.
 */
const MAX_COOKIES = 16
/** A refresh token (32 random bytes, base64url): nothing else is looked up. */
const TOKEN = /^[\w-]{43}$/

/**
 * Where the browser ends a session's login at its OpenID provider (the OAuth feature's end-session URL). A
 * refused request (400) is thrown before anything ends; a provider that cannot be reached leaves the logout local.
 */
async function providerLogoutRedirect(ctx: AuthContext, upstream: UpstreamLogin, request: { postLogoutRedirectUri?: string }): Promise<string | undefined> {
  const feature = ctx.features.find(candidate => candidate.providerLogoutUrl)
  try {
    return await feature?.providerLogoutUrl?.(ctx, upstream, request)
  }
  catch (error) {
    if (isError(error) && error.statusCode < 500) throw error
    ctx.logger.warn(`The end-session endpoint of ${upstream.provider} could not be read: the logout stays local`, error)
    return undefined
  }
}

/** Any token of the session ends it, also one rotated since (the owner of a stolen cookie logs the thief out). */
export default defineAuthRoute(guarded(CORE_ROUTES.logout, async (ctx, event, input) => {
  const cookies = refreshCookieValues(event, ctx)
  const tokens = [...new Set(cookies.filter(cookie => TOKEN.test(cookie)))].slice(-MAX_COOKIES)
  // The site's own cookie is the last: its session's provider login, read before it ends.
  const own = input.provider && tokens.length ? await readSessionRecord(ctx, tokens.at(-1)!) : null
  const redirect = own?.upstream ? await providerLogoutRedirect(ctx, own.upstream, input) : undefined
  // Each session ended is reported as a `logout` (revokeFamily).
  for (const cookie of tokens) await revokeRefreshToken(ctx, cookie, event)
  if (cookies.length > 1) clearTossedRefreshCookies(event, ctx)
  else clearRefreshCookie(event, ctx)
  return { success: true as const, ...(redirect ? { redirect } : {}) }
}))
