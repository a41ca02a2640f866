/**
 * Server middleware of every request: enforces the `auth` route rule (401 without a valid bearer; 403 for a
 * permission or role the active organization's role does not meet),
 * fills `event.context.user` from a bearer token (never from the refresh cookie), and with `enableSSR`
 * gives page requests with a refresh cookie `event.context.ssrAccessToken`.
 */
import { defineEventHandler, getCookie, getRequestHeader, type H3Event } from 'h3'
import { getRouteRules, useRuntimeConfig } from 'nitropack/runtime'
import type { AuthContext } from '../lib/core/context'
import { sendAuthError } from '../lib/edge/errors'
import { requestLocale } from '../lib/core/locale-of'
import { readSessionRecord } from '../lib/core/records/refresh-token'
import { routePaths } from '#svc-auth/features'
import { createPathMatcher } from '../lib/edge/path-matcher'
import { restorePresenceCookie } from '../lib/edge/presence-cookie'
import { resolveAuthRule } from '../lib/edge/route-rules'
import { mintSessionToken, readRefreshCookie, resolveGlobalClaims } from '../lib/core/session-tokens'
import { authOptions, peekAuthContext, useAuthContext } from '../utils/auth-context'
import { authenticate, authenticationError } from '../lib/core/authenticate'
import { requireAccessRule } from '../lib/core/permission-rule'

/** The paths the module answers on (the build's list): whole paths, so `/authors` is a page while `/auth/google` is not. */
const isModuleRoute = createPathMatcher(routePaths)

/** A GET for an HTML page: not an asset, an API route or one of the module's routes. */
function isPageRequest(event: H3Event): boolean {
  if (event.method !== 'GET') return false
  const accept = getRequestHeader(event, 'accept') ?? ''
  if (!accept.includes('text/html')) return false
  const path = event.path
  if (path.startsWith('/_nuxt/') || path.startsWith('/api/') || path.startsWith('/__nuxt')) return false
  return !isModuleRoute(path)
}

async function attachSsrToken(event: H3Event, ctx: AuthContext): Promise<void> {
  const cookie = readRefreshCookie(event, ctx)
  if (!cookie) return
  const record = await readSessionRecord(ctx, cookie)
  if (!record || record.impersonation) return
  const claims = await resolveGlobalClaims(ctx, record.user, record.claims)
  const { token } = await mintSessionToken(ctx, record, claims, ctx.lifetimes.ssr)
  event.context.ssrAccessToken = token
}

export default defineEventHandler(async (event) => {
  let ctx = peekAuthContext()
  try {
    const options = ctx?.options ?? authOptions()
    const value = getRouteRules(event).auth
    const rule = resolveAuthRule(value)
    const hasBearer = !!event.node.req.headers.authorization
    const needsUser = hasBearer || rule === 'required'
    const page = isPageRequest(event)
    // A session that began before the presence flag existed gets it with its next page load.
    if (page && options.tokenRefresh.enabled) restorePresenceCookie(event, options.tokenRefresh.cookie, useRuntimeConfig().app?.baseURL || '/')
    const wantsSsrToken = options.enableSSR && page && !!getCookie(event, options.tokenRefresh.cookie.cookieName)
    // Nothing to check: the request never waits for the auth context (start-up, storage).
    if (!needsUser && !wantsSsrToken) return
    ctx ??= await useAuthContext()
    if (needsUser) {
      const user = await authenticate(event, ctx)
      if (rule === 'required') {
        if (!user) throw authenticationError(event)
        // `{ permission }` or `{ role }`: the role of the active organization decides (403 `permission_denied`).
        if (typeof value === 'object') requireAccessRule(ctx, value, user)
      }
    }
    if (wantsSsrToken) {
      // A storage failure renders the page logged out instead of failing it.
      await attachSsrToken(event, ctx).catch(error => ctx?.logger.warn('Could not create the SSR access token', error))
    }
  }
  catch (error) {
    return sendAuthError(event, error, ctx?.logger ?? console, ctx && (await requestLocale(ctx, event)).lookup)
  }
})
