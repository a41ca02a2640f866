/**
 * Session start of the app.
 * - Server (with `enableSSR`): the user of the per-request SSR token goes into the session state,
 *   so the first paint already shows who is logged in. Only the decoded claims travel in the
 *   payload, never the token; such pages are sent with `Cache-Control: private, no-store`.
 * - Browser (rule 8): unless on the callback page, on a public route, with a token in memory or
 *   without a session (no presence flag cookie and no user from the server), one refresh with
 *   the cookie. When the server already knew the session (SSR token) it runs in
 *   the background: the page already shows the user (with the client middleware, a protected
 *   page is left for the login page when that refresh is refused). Otherwise (no SSR, or
 *   `enableSSR: false`) the app waits for it before the route middleware runs, so protected
 *   pages are not left for the login page by mistake.
 * - Provides `$authFetch` (the same helper as `useAuthFetch()`).
 */
import type { NuxtApp } from '#app'
import { defineNuxtPlugin, useNuxtApp, useRouter } from '#imports'
import { clientMiddleware } from '#build/svc-auth/client-options.mjs'
import type { PublicAuthConfig } from '../../types/options'
import { getAuthFetch } from '../auth-client'
import { userFromToken } from '../lib/token-payload'
import { isPublicRoute } from '../lib/route-paths'
import { normalizePath, stripBase } from '../../shared/paths'
import { accessOf, afterHydration, goTo, inApp, loginRedirect, publicAuthConfig, refreshSession, sessionMayExist, sessionState, settleWithoutSession, tokenState } from '../state'

function hydrateFromServer(nuxtApp: NuxtApp, config: PublicAuthConfig): void {
  if (!config.enableSSR) return
  const event = nuxtApp.ssrContext?.event
  const user = userFromToken(event?.context.ssrAccessToken)
  sessionState(nuxtApp).value = { user, checked: true, pending: false }
  if (user && event) {
    event.node.res.setHeader('cache-control', 'private, no-store')
    event.node.res.setHeader('vary', 'cookie')
  }
}

/** Rule 8: whether the app starts with a refresh. */
function refreshesOnStart(nuxtApp: NuxtApp, config: PublicAuthConfig, path: string): boolean {
  if (!config.tokenRefresh.enabled || tokenState(nuxtApp).value) return false
  if (normalizePath(path) === normalizePath(config.endpoints.callbackPath)) return false
  return !isPublicRoute(path, config.clientMiddleware.publicRoutes)
}

/** After a background startup refresh found no session: leave a protected page for the login page. */
async function leaveProtectedPage(nuxtApp: NuxtApp, config: PublicAuthConfig): Promise<void> {
  if (!config.clientMiddleware.enabled) return
  const route = inApp(nuxtApp, () => useRouter()).currentRoute.value
  if (accessOf(config, route) !== 'protected') return
  await goTo(nuxtApp, loginRedirect(config, route.fullPath))
}

async function startSession(nuxtApp: NuxtApp, config: PublicAuthConfig): Promise<void> {
  const path = stripBase(window.location.pathname, nuxtApp.$config.app.baseURL)
  if (!refreshesOnStart(nuxtApp, config, path)) return
  // No presence flag and no user from the server: certainly no refresh cookie, so no request
  // (a refused one would only log a 401 in the console). The state is what that refusal leaves.
  if (!sessionMayExist(nuxtApp)) return settleWithoutSession(nuxtApp)
  const knownFromServer = sessionState(nuxtApp).value.checked
  // While hydrating, the state changes wait until hydration is done, so that the first render
  // matches the server's HTML; the token is kept at once (the middleware reads it).
  const started = refreshSession(nuxtApp, { defer: nuxtApp.isHydrating })
  if (!knownFromServer) {
    await started
    return
  }
  // Built without the client middleware (`clientMiddleware.enabled` is read at build time) no page
  // is protected, and the code that decides what a route needs stays out of the browser bundle.
  if (!clientMiddleware) return
  void started.then((outcome) => {
    if (!outcome.token && outcome.status) afterHydration(nuxtApp, () => leaveProtectedPage(nuxtApp, config))
  })
}

export default defineNuxtPlugin({
  name: 'svc-auth',
  async setup() {
    const nuxtApp = useNuxtApp()
    const config = publicAuthConfig(nuxtApp)
    const authFetch = getAuthFetch(nuxtApp)
    // Braces and separate returns: the async-context transform of plugins mishandles an
    // `if/else` whose branch awaits.
    if (import.meta.server) {
      hydrateFromServer(nuxtApp, config)
      return { provide: { authFetch } }
    }
    await startSession(nuxtApp, config)
    return { provide: { authFetch } }
  },
})
