import type { NuxtApp } from '#app'
import type { ComputedRef } from 'vue'
import { computed } from 'vue'
import { navigateTo, useNuxtApp, useRuntimeConfig } from '#imports'
import type { AuthClaims, AuthSession, OriginalUser } from '../../types/auth'
import { statusOf } from '../lib/auth-fetch'
import { getAuthFetch } from './useAuthFetch'
import { decodeTokenClaims } from '../lib/claims'
import { originalUserOf } from '../../shared/impersonation'
import { accessTokenOf } from '../../shared/token-response'
import { loginUrl, safeRedirect, type LoginUrlOptions } from '../lib/paths'
import { joinBase, withQuery } from '../../shared/paths'
import { authRuntime, clearSession, pendingRefresh, publicAuthConfig, refreshSession, sessionState, setAccessToken, tokenState } from '../state'

export type { LoginUrlOptions as LoginOptions } from '../lib/paths'

/** What `useAuth()` returns. */
export interface UseAuthReturn {
  /** Claims of the current access token (without `jti` and `sid`), or null when logged out. */
  user: ComputedRef<AuthClaims | null>
  isLoggedIn: ComputedRef<boolean>
  /** False only while the app does not know yet whether someone is logged in. */
  ready: ComputedRef<boolean>
  /** A refresh or code exchange is in flight. */
  loading: ComputedRef<boolean>
  /** The current token carries the `impersonation` claim. */
  isImpersonating: ComputedRef<boolean>
  /** While impersonating, the requester `{ sub, email?, name? }`; else null. */
  originalUser: ComputedRef<OriginalUser | null>
  /** Goes to `<loginPath>/<provider>` (a full page load), optionally with `?redirect=<path>`. */
  login(provider: string, options?: LoginUrlOptions): Promise<void>
  /** POST /auth/logout, forgets the token, then goes to `redirect.logout`. */
  logout(): Promise<void>
  /** One refresh with the cookie (shared with any refresh in flight). True when it succeeded. */
  refresh(): Promise<boolean>
  /** POST /auth/impersonate; on success the app continues as the target user. */
  impersonate(targetUserId: string, reason?: string): Promise<void>
  /** POST /auth/unimpersonate; on success the app continues as the original user. */
  unimpersonate(): Promise<void>
  /**
   * What the callback page does: exchanges `query.code` at POST /auth/token, keeps the token and
   * goes to the path chosen at login or `redirect.success`; errors go to `redirect.error` with
   * `error` and `error_description`. For a host page replacing the module's callback page.
   */
  handleCallback(query: Record<string, unknown>): Promise<void>
  /**
   * The in-memory access token (browser), after any refresh in flight; null on the server and
   * when logged out. For other clients (websockets, GraphQL); never store it anywhere.
   */
  getAccessToken(): Promise<string | null>
  /**
   * GET /auth/sessions: the user's sessions (logins), most recently used first, with
   * `current: true` on this one. Refreshes and retries once on a 401, like `useAuthFetch`.
   */
  listSessions(): Promise<AuthSession[]>
  /**
   * DELETE /auth/sessions/:id: ends one of the user's sessions; the browser holding it is logged
   * out at its next request. Ending the current session logs this app out (as `logout()` does,
   * without the redirect).
   */
  revokeSession(id: string): Promise<void>
  /** POST /auth/sessions/revoke-others: ends every other session of the user; resolves how many. */
  revokeOtherSessions(): Promise<number>
}

function firstString(value: unknown): string | undefined {
  const first = Array.isArray(value) ? value[0] : value
  return typeof first === 'string' && first ? first : undefined
}

/** Data of an ofetch error (`{ statusCode, message, error }` for the module's endpoints). */
function errorBody(error: unknown): { message?: string, error?: string } {
  const data = (error as { data?: unknown } | null)?.data
  if (!data || typeof data !== 'object') return {}
  const { message, error: code } = data as { message?: unknown, error?: unknown }
  return { message: typeof message === 'string' ? message : undefined, error: typeof code === 'string' ? code : undefined }
}

async function currentToken(nuxtApp: NuxtApp): Promise<string | null> {
  if (import.meta.server) return null
  const inFlight = pendingRefresh(nuxtApp)
  if (inFlight) await inFlight
  const token = tokenState(nuxtApp).value
  if (token || !sessionState(nuxtApp).value.user) return token
  // Logged in according to the SSR render but no token yet (public route): get one.
  return (await refreshSession(nuxtApp)).token
}

function tokenOf(body: unknown): string {
  const value = accessTokenOf(body)
  if (!value) throw new Error('The answer holds no access token')
  return value
}

async function postWithToken(nuxtApp: NuxtApp, path: string, body?: Record<string, unknown>): Promise<string> {
  const token = await currentToken(nuxtApp)
  const answer = await $fetch<unknown>(path, {
    method: 'POST',
    body,
    credentials: 'include',
    retry: 0,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  })
  return tokenOf(answer)
}

async function exchangeCode(nuxtApp: NuxtApp, query: Record<string, unknown>): Promise<void> {
  const config = publicAuthConfig(nuxtApp)
  const { redirect, endpoints } = config
  const go = (path: string) => nuxtApp.runWithContext(() => navigateTo(path, { replace: true }))
  const fail = (error: string, description?: string) => go(withQuery(redirect.error, { error, error_description: description }))
  const providerError = firstString(query.error)
  if (providerError) return void (await fail(providerError, firstString(query.error_description)))
  const code = firstString(query.code)
  if (!code) return void (await fail('missing_code', 'The login did not return an authorization code.'))
  const runtime = authRuntime(nuxtApp)
  if (runtime.exchanging === code) return
  runtime.exchanging = code
  const session = sessionState(nuxtApp)
  session.value = { ...session.value, pending: true }
  let answer: unknown
  try {
    answer = await $fetch<unknown>(endpoints.tokenPath, { method: 'POST', body: { code }, credentials: 'include', retry: 0 })
    setAccessToken(nuxtApp, tokenOf(answer))
  }
  catch (error) {
    clearSession(nuxtApp)
    const body = errorBody(error)
    const fallbackCode = statusOf(error) ? 'token_exchange_failed' : 'network_error'
    return void (await fail(body.error ?? fallbackCode, body.message ?? 'The login could not be completed.'))
  }
  finally {
    runtime.exchanging = undefined
  }
  const chosen = (answer as { redirect?: unknown }).redirect
  await go(safeRedirect(chosen, redirect.success, [endpoints.callbackPath]))
}

/**
 * The session of the app: who is logged in (the access token's claims), login and logout, manual
 * refresh and impersonation. State lives in `useState`; the access token is kept in memory only.
 */
export function useAuth(): UseAuthReturn {
  const nuxtApp = useNuxtApp()
  const config = publicAuthConfig(nuxtApp)
  const session = sessionState(nuxtApp)
  const user = computed(() => session.value.user)

  async function login(provider: string, options: LoginUrlOptions = {}): Promise<void> {
    const base = useRuntimeConfig().app.baseURL
    await navigateTo(joinBase(base, loginUrl(config.endpoints.loginPath, provider, options)), { external: true })
  }

  async function logout(): Promise<void> {
    try {
      await $fetch(config.endpoints.logoutPath, { method: 'POST', credentials: 'include', retry: 0 })
    }
    finally {
      clearSession(nuxtApp)
    }
    await nuxtApp.runWithContext(() => navigateTo(config.redirect.logout))
  }

  async function refresh(): Promise<boolean> {
    return !!(await refreshSession(nuxtApp)).token
  }

  async function impersonate(targetUserId: string, reason?: string): Promise<void> {
    const token = await postWithToken(nuxtApp, config.endpoints.impersonatePath, { targetUserId, ...(reason ? { reason } : {}) })
    setAccessToken(nuxtApp, token)
  }

  async function unimpersonate(): Promise<void> {
    setAccessToken(nuxtApp, await postWithToken(nuxtApp, config.endpoints.unimpersonatePath))
  }

  const sessionsPath = config.endpoints.sessionsPath.replace(/\/$/, '')

  async function listSessions(): Promise<AuthSession[]> {
    const answer = await getAuthFetch(nuxtApp)<{ sessions?: AuthSession[] }>(config.endpoints.sessionsPath)
    return Array.isArray(answer?.sessions) ? answer.sessions : []
  }

  async function revokeSession(id: string): Promise<void> {
    const current = decodeTokenClaims(tokenState(nuxtApp).value)?.sid === id
    await getAuthFetch(nuxtApp)(`${sessionsPath}/${encodeURIComponent(id)}`, { method: 'DELETE' })
    if (current) clearSession(nuxtApp)
  }

  async function revokeOtherSessions(): Promise<number> {
    const answer = await getAuthFetch(nuxtApp)<{ revoked?: number }>(`${sessionsPath}/revoke-others`, { method: 'POST' })
    return typeof answer?.revoked === 'number' ? answer.revoked : 0
  }

  return {
    user,
    isLoggedIn: computed(() => !!session.value.user),
    ready: computed(() => session.value.checked || !session.value.pending),
    loading: computed(() => session.value.pending),
    isImpersonating: computed(() => !!session.value.user?.impersonation),
    originalUser: computed(() => originalUserOf(session.value.user)),
    login,
    logout,
    refresh,
    impersonate,
    unimpersonate,
    handleCallback: query => exchangeCode(nuxtApp, query),
    getAccessToken: () => currentToken(nuxtApp),
    listSessions,
    revokeSession,
    revokeOtherSessions,
  }
}
