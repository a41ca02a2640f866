/** Session state of the app (`useState`); per-app objects hang off the app instance, never module variables. */
import type { NuxtApp } from '#app'
import type { Ref } from 'vue'
import { ref } from 'vue'
import { createError, navigateTo, useState } from '#imports'
import { organizations } from '#build/svc-auth/client-features.mjs'
import type { AuthClaims } from '../types/auth'
import type { PublicAuthConfig } from '../types/options'
import { routeAccess, type RouteAccess } from './lib/access'
import { messageOf, shareRefresh, statusOf, withBearer, type RefreshHolder, type RefreshOutcome } from './lib/auth-fetch'
import { userFromToken } from './lib/token-payload'
import { refreshErrorUrl } from './lib/route-paths'
import { mayHaveSession } from './lib/presence-hint'
import { hasCookie } from '../shared/presence'
import { lockedRefresh, readTabMessage, type TabMessage } from './lib/tab-sync'
import { isRelativePath, joinBase, normalizePath, withQuery } from '../shared/paths'
import { accessTokenOf } from '../shared/token-response'

/** Key of the in-memory access token (browser only: never set on the server, so never in the payload). */
export const ACCESS_TOKEN_STATE = 'svc-auth:access-token'
/** Key of the session state (user claims, no token; serialized into the SSR payload). */
export const SESSION_STATE = 'svc-auth:session'

export interface AuthSessionState {
  /** Claims of the current access token without `jti` and `sid`, or null when logged out. */
  user: AuthClaims | null
  /** True once `user` reflects a check of the session (SSR token, refresh or login). */
  checked: boolean
  /** A refresh or code exchange is in flight. */
  pending: boolean
}

/** Per-app objects that are not state: the shared refresh and the cached fetch helper. */
export interface AuthRuntime {
  refresh: RefreshHolder
  /** Authorization code being exchanged by the callback page (guards against a double exchange). */
  exchanging?: string
  /** Same-origin path chosen for a login whose server flow keeps none (password): used by the next code exchange. */
  afterLogin?: string
  /** The fetch helper of this app (built on first use). */
  fetcher?: unknown
  /** The channel to this app's other tabs in the browser (none without BroadcastChannel). */
  channel?: BroadcastChannel
}

type NuxtAppWithAuth = NuxtApp & { _svcAuth?: AuthRuntime }

/** Runs a composable in the app's context (in the browser synchronously, also from event handlers). */
export function inApp<T>(nuxtApp: NuxtApp, fn: () => T): T {
  return import.meta.client ? nuxtApp.runWithContext(fn) as T : fn()
}

/** The per-app runtime objects of the module. */
export function authRuntime(nuxtApp: NuxtApp): AuthRuntime {
  const app = nuxtApp as NuxtAppWithAuth
  app._svcAuth ??= { refresh: { pending: null } }
  return app._svcAuth
}

/** `runtimeConfig.public.svcAuth`. */
export function publicAuthConfig(nuxtApp: NuxtApp): PublicAuthConfig {
  return (nuxtApp.$config.public as unknown as { svcAuth: PublicAuthConfig }).svcAuth
}

/** The session state (`useState`). */
export function sessionState(nuxtApp: NuxtApp): Ref<AuthSessionState> {
  return inApp(nuxtApp, () => useState<AuthSessionState>(SESSION_STATE, () => ({ user: null, checked: false, pending: false })))
}

/** The in-memory access token (browser only); on the server a throwaway ref, so no token reaches the SSR payload. */
export function tokenState(nuxtApp: NuxtApp): Ref<string | null> {
  if (import.meta.server) return ref(null)
  return inApp(nuxtApp, () => useState<string | null>(ACCESS_TOKEN_STATE, () => null))
}

/** Runs `fn` now, or once hydration is done when the app is still hydrating. */
export function afterHydration(nuxtApp: NuxtApp, fn: () => void | Promise<void>): void {
  if (nuxtApp.isHydrating) nuxtApp.hooks.hookOnce('app:suspense:resolve', fn)
  else void fn()
}

/** Runs `update` now or, with `defer`, after hydration: the first render must match the server's HTML. */
function applyState(nuxtApp: NuxtApp, update: () => void, defer: boolean): void {
  if (defer) afterHydration(nuxtApp, update)
  else update()
}

function keepToken(nuxtApp: NuxtApp, token: string | null, defer = false): void {
  tokenState(nuxtApp).value = token
  const user = userFromToken(token)
  applyState(nuxtApp, () => {
    sessionState(nuxtApp).value = { user, checked: true, pending: false }
  }, defer)
}

/** Tells this app's other tabs in the browser (nothing without BroadcastChannel). */
function tellTabs(nuxtApp: NuxtApp, message: TabMessage): void {
  authRuntime(nuxtApp).channel?.postMessage(message)
}

/** Keeps a new access token from the server in memory, the user of its claims in the state, and hands it to the other tabs. */
export function setAccessToken(nuxtApp: NuxtApp, token: string, defer = false): void {
  keepToken(nuxtApp, token, defer)
  tellTabs(nuxtApp, token)
}

/** Forgets the token and the user. */
export function clearSession(nuxtApp: NuxtApp, defer = false): void {
  keepToken(nuxtApp, null, defer)
}

/** The session ended (logout): forgets it here and in the other tabs. */
export function endSession(nuxtApp: NuxtApp): void {
  clearSession(nuxtApp)
  tellTabs(nuxtApp, 'logout')
}

/** The lock and the channel of the app's tabs: named by its refresh endpoint, so two apps on one origin differ. */
function tabsName(nuxtApp: NuxtApp): string {
  return `svc-auth ${joinBase(nuxtApp.$config.app.baseURL, publicAuthConfig(nuxtApp).endpoints.refreshPath)}`
}

/**
 * Listens to the app's other tabs (browser, where BroadcastChannel exists): takes a newer token they got, and on
 * their logout forgets the session and calls `onLogout`. The channel closes when the app unmounts.
 */
export function joinTabs(nuxtApp: NuxtApp, onLogout: () => void): void {
  if (!globalThis.BroadcastChannel) return
  const runtime = authRuntime(nuxtApp)
  const channel = runtime.channel = new BroadcastChannel(tabsName(nuxtApp))
  channel.onmessage = ({ data }) => {
    const message = readTabMessage(data, tokenState(nuxtApp).value)
    const logout = message === 'logout'
    if (message) keepToken(nuxtApp, logout ? null : message, nuxtApp.isHydrating)
    if (logout) onLogout()
  }
  nuxtApp.vueApp.onUnmount(() => {
    runtime.channel = undefined
    channel.close()
  })
}

/** Marks a refresh or code exchange in flight (or none), with `defer` as in `setAccessToken`. */
export function setPending(nuxtApp: NuxtApp, pending: boolean, defer = false): void {
  applyState(nuxtApp, () => {
    const session = sessionState(nuxtApp)
    if (session.value.pending !== pending) session.value = { ...session.value, pending }
  }, defer)
}

/** `navigateTo` in the app's context (also after an `await`). */
export function goTo(nuxtApp: NuxtApp, path: string, options?: Parameters<typeof navigateTo>[1]) {
  return nuxtApp.runWithContext(() => navigateTo(path, options))
}

/** POST to one of the module's endpoints with the cookie (and `token` as bearer, if given), never retried. */
export function postAuth(path: string, body?: Record<string, unknown>, token?: string | null): Promise<unknown> {
  return $fetch<unknown>(path, withBearer({ method: 'POST' as const, body, credentials: 'include' as const }, token))
}

/** A string field of an ofetch error's body (`{ statusCode, message, error }` for the module's endpoints). */
export function errorField(error: unknown, key: 'message' | 'error'): string | undefined {
  const value = (error as { data?: Record<string, unknown> } | null)?.data?.[key]
  return typeof value === 'string' ? value : undefined
}

/** `{ error, message }` of a refused call (the module's error body); `network_error` when no answer came. */
export function authErrorOf(error: unknown): { error: string, message: string } {
  return {
    error: errorField(error, 'error') ?? 'network_error',
    message: errorField(error, 'message') ?? 'The request failed: check the connection and try again.',
  }
}

/** The access token of a token-issuing answer (see `accessTokenOf`); throws unless it has one whose claims parse. */
export function tokenOf(body: unknown): string {
  const token = accessTokenOf(body)
  if (!userFromToken(token)) throw new Error('No access token')
  return token!
}

async function postRefresh(nuxtApp: NuxtApp, defer: boolean): Promise<RefreshOutcome> {
  const { endpoints } = publicAuthConfig(nuxtApp)
  try {
    const token = tokenOf(await postAuth(endpoints.refreshPath))
    setAccessToken(nuxtApp, token, defer)
    return { token }
  }
  catch (error) {
    const status = statusOf(error)
    // The server said no: the session is gone. Without an answer (offline) nothing is known.
    if (status) clearSession(nuxtApp, defer)
    else {
      tokenState(nuxtApp).value = null
      setPending(nuxtApp, false, defer)
    }
    return { token: null, status, message: errorField(error, 'message') ?? messageOf(error) }
  }
}

/** POST /auth/refresh, shared by concurrent callers; a refusal clears the session. Never throws. */
export function refreshSession(nuxtApp: NuxtApp, defer = false): Promise<RefreshOutcome> {
  if (import.meta.server) return Promise.resolve({ token: null, message: 'No refresh on the server' })
  const config = publicAuthConfig(nuxtApp)
  if (!config.tokenRefresh.enabled) return Promise.resolve({ token: null })
  const runtime = authRuntime(nuxtApp)
  if (!runtime.refresh.pending && !(defer && nuxtApp.isHydrating)) setPending(nuxtApp, true)
  // One tab at a time: a tab that waited takes the token the one before it handed over, if any.
  return shareRefresh(runtime.refresh, () => lockedRefresh(globalThis.navigator?.locks, tabsName(nuxtApp), tokenState(nuxtApp), () => postRefresh(nuxtApp, defer)))
}

/** The refresh in flight, if any. */
export function pendingRefresh(nuxtApp: NuxtApp): Promise<RefreshOutcome> | null {
  return authRuntime(nuxtApp).refresh.pending
}

/** False in the browser when it certainly holds no session (no presence flag, no rendered user). */
export function sessionMayExist(nuxtApp: NuxtApp): boolean {
  const known = !!sessionState(nuxtApp).value.user || !!tokenState(nuxtApp).value
  return mayHaveSession(document.cookie, publicAuthConfig(nuxtApp).tokenRefresh.presenceCookie, known)
}

/** True in the browser when the presence flag cookie is set (a refresh cookie may exist). */
function presenceFlagSet(nuxtApp: NuxtApp): boolean {
  return hasCookie(document.cookie, publicAuthConfig(nuxtApp).tokenRefresh.presenceCookie ?? '')
}

/** Records that there is no session without a request (after hydration while hydrating). */
export function settleWithoutSession(nuxtApp: NuxtApp): void {
  if (!sessionState(nuxtApp).value.checked) clearSession(nuxtApp, nuxtApp.isHydrating)
}

/** Makes sure the state reflects a check: waits for the refresh in flight, or starts one when a session may exist. */
export async function ensureSession(nuxtApp: NuxtApp): Promise<void> {
  const inFlight = pendingRefresh(nuxtApp)
  if (inFlight) {
    await inFlight
    return
  }
  if (!import.meta.client || sessionState(nuxtApp).value.checked || tokenState(nuxtApp).value) return
  if (sessionMayExist(nuxtApp)) await refreshSession(nuxtApp)
  else settleWithoutSession(nuxtApp)
}

/** After a failed refresh of a session's request: forget the token and go to the error page (once). */
export async function handleRefreshFailure(nuxtApp: NuxtApp, outcome: RefreshOutcome, hadSession: boolean): Promise<void> {
  if (!hadSession || outcome.handled) return
  outcome.handled = true
  clearSession(nuxtApp)
  await goTo(nuxtApp, refreshErrorUrl(publicAuthConfig(nuxtApp).redirect.error))
}

/** Paths the protecting middleware never guards: the callback page and the error page. */
export function exemptPaths(config: PublicAuthConfig): string[] {
  return [config.endpoints.callbackPath, config.redirect.error.split('?')[0] || '/']
}

/** What the route needs (see `routeAccess`). */
export function accessOf(config: PublicAuthConfig, route: { path: string, meta?: unknown }, named?: 'auth' | 'guest'): RouteAccess {
  return routeAccess({ path: route.path, meta: route.meta, named, middleware: config.clientMiddleware, exempt: exemptPaths(config) })
}

/** The login page (`redirectTo`) with `?redirect=<the page asked for>`. */
export function loginRedirect(config: PublicAuthConfig, fullPath: string): string {
  const target = config.clientMiddleware.redirectTo || '/'
  const back = isRelativePath(fullPath) && normalizePath(fullPath) !== normalizePath(target) ? fullPath : undefined
  return withQuery(target, { redirect: back })
}

/**
 * The client middleware: protected routes send visitors to `redirectTo`, guest routes send users away. With
 * organizations, a page whose `auth` asks for a permission or a role is protected, and a user whose role in the
 * active organization does not meet it gets the 403 error page.
 */
export async function guardRoute(nuxtApp: NuxtApp, to: { path: string, fullPath: string, meta?: unknown }, named?: 'auth' | 'guest') {
  const config = publicAuthConfig(nuxtApp)
  if (!config.clientMiddleware.enabled) return
  // The server's render of an error page (a 403 of this guard) runs without the session: never send it elsewhere.
  if (import.meta.server && nuxtApp.ssrContext?.error) return
  // Without organizations the bundler folds `organizations` to undefined and drops these branches.
  const rule = organizations ? organizations.accessRuleOf(to.meta) : undefined
  const access = rule ? 'protected' : accessOf(config, to, named)
  if (access === 'open') return
  const session = sessionState(nuxtApp)
  if (!session.value.checked) {
    if (import.meta.server) return
    await ensureSession(nuxtApp)
  }
  else if (import.meta.client && access === 'protected' && !session.value.user && !tokenState(nuxtApp).value && presenceFlagSet(nuxtApp)) {
    // The presence flag is back after a check found no session: another tab logged in since.
    await refreshSession(nuxtApp)
  }
  // The token counts too: while hydrating, a startup refresh keeps it at once but shows the user after.
  const loggedIn = !!session.value.user || !!tokenState(nuxtApp).value
  if (access === 'protected') {
    if (!loggedIn) return navigateTo(loginRedirect(config, to.fullPath))
    if (organizations && rule && !organizations.meets(config.organizations?.roles, session.value.user ?? userFromToken(tokenState(nuxtApp).value), rule)) return createError(organizations.permissionDenied())
    return
  }
  const home = config.clientMiddleware.loggedOutRedirectTo || '/'
  if (loggedIn && normalizePath(home) !== normalizePath(to.path)) return navigateTo(home)
}
