/**
 * Session start: on the server the SSR token's claims (never the token) go into the state; in the
 * browser one refresh unless needless (in the background when the server knew the session).
 */
import type { NuxtApp } from '#app'
import { defineNuxtPlugin, useNuxtApp, useRouter } from '#imports'
import { clientMiddleware } from '#build/svc-auth/client-options.mjs'
import type { PublicAuthConfig } from '../../types/options'
import { getAuthFetch } from '../auth-client'
import { userFromToken } from '../lib/token-payload'
import { isPublicRoute } from '../lib/route-paths'
import { normalizePath, stripBase } from '../../shared/paths'
import { accessOf, afterHydration, goTo, inApp, joinTabs, loginRedirect, publicAuthConfig, refreshSession, sessionMayExist, sessionState, settleWithoutSession, tokenState } from '../state'

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
  // Certainly no refresh cookie: no request (a refused one would only log a 401); the state a refusal leaves.
  if (!sessionMayExist(nuxtApp)) return settleWithoutSession(nuxtApp)
  const knownFromServer = sessionState(nuxtApp).value.checked
  // While hydrating, state changes wait for hydration (first render matches the HTML); the token is kept at once.
  const started = refreshSession(nuxtApp, nuxtApp.isHydrating)
  if (!knownFromServer) await started
  // Built without the client middleware: no page is protected, and the route logic stays out of the bundle.
  else if (clientMiddleware) {
    void started.then((outcome) => {
      if (!outcome.token && outcome.status) afterHydration(nuxtApp, () => leaveProtectedPage(nuxtApp, config))
    })
  }
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
    // Another tab's logout takes the path of a refused refresh: a protected page goes to the login page.
    joinTabs(nuxtApp, () => clientMiddleware && afterHydration(nuxtApp, () => leaveProtectedPage(nuxtApp, config)))
    await startSession(nuxtApp, config)
    return { provide: { authFetch } }
  },
})
