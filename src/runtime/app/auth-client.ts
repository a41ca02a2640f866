/** The client API (`useAuthFetch`, `$authFetch`, `useAuth`), in the start-up plugin's chunk. */
import type { NuxtApp } from '#app'
import type { $Fetch, NitroFetchRequest } from 'nitropack'
import { computed } from 'vue'
import { navigateTo, useNuxtApp } from '#imports'
import { magicLink as magicLinkClient, organizations, passkey as passkeyClient } from '#build/svc-auth/client-features.mjs'
import type { AuthSession } from '../types/auth'
import type { LoginOptions, LogoutOptions, UseAuthReturn } from './auth-client-types'
import { createAuthFetchCore, statusOf, type AuthFetchDeps, type AuthFetchOptions } from './lib/auth-fetch'
import { decodeTokenClaims } from './lib/token-payload'
import { isAuthEndpoint, loginUrl, safeRedirect } from './lib/route-paths'
import { originalUserOf } from '../shared/original-user'
import { joinBase, withQuery } from '../shared/paths'
import { authRuntime, clearSession, endSession, errorField, goTo, handleRefreshFailure, pendingRefresh, postAuth, publicAuthConfig, refreshSession, sessionState, setAccessToken, setPending, tokenOf, tokenState } from './state'

/** The fetch helper: `$fetch` with the access token and the refresh rules. */
export type AuthFetch = $Fetch<unknown, NitroFetchRequest>

type Sender = (request: string | Request, options: AuthFetchOptions) => Promise<unknown>

const SSR_DISABLED = '[svc-auth] useAuthFetch is not available on the server when enableSSR is false: fetch in the browser instead (for example useAsyncData(..., { server: false })).'

function browserDeps(nuxtApp: NuxtApp): AuthFetchDeps {
  const config = publicAuthConfig(nuxtApp)
  const orgs = organizations
  return {
    automaticRefresh: config.tokenRefresh.enabled && config.tokenRefresh.automaticRefresh,
    getToken: () => tokenState(nuxtApp).value,
    pendingRefresh: () => pendingRefresh(nuxtApp),
    refresh: () => refreshSession(nuxtApp),
    hasSession: () => !!sessionState(nuxtApp).value.user,
    onRefreshFailed: (outcome, { hadSession }) => handleRefreshFailure(nuxtApp, outcome, hadSession),
    // With organizations, their routes refresh and retry on a 401 (a stale token after a role change).
    isAuthEndpoint: orgs ? (request, baseURL) => orgs.isAuthEndpoint(request, config.endpoints, baseURL) : (request, baseURL) => isAuthEndpoint(request, config.endpoints, baseURL),
  }
}

/** Server side: the per-request SSR token, no refresh and no retry (Authentication rule 5). */
function serverDeps(nuxtApp: NuxtApp): AuthFetchDeps {
  const config = publicAuthConfig(nuxtApp)
  return {
    automaticRefresh: false,
    getToken: () => nuxtApp.ssrContext?.event.context.ssrAccessToken,
    pendingRefresh: () => null,
    refresh: async () => ({ token: null }),
    onRefreshFailed: () => {},
    isAuthEndpoint: (request, baseURL) => isAuthEndpoint(request, config.endpoints, baseURL),
  }
}

function mergeDefaults(defaults: AuthFetchOptions, options: AuthFetchOptions = {}): AuthFetchOptions {
  const headers = new Headers(defaults.headers)
  new Headers(options.headers).forEach((value, key) => headers.set(key, value))
  return { ...defaults, ...options, headers }
}

function buildAuthFetch(nuxtApp: NuxtApp, defaults: AuthFetchOptions = {}): AuthFetch {
  if (import.meta.server && !publicAuthConfig(nuxtApp).enableSSR) {
    const refuse = () => Promise.reject(new Error(SSR_DISABLED))
    return Object.assign(refuse, { raw: refuse, native: refuse, create: () => buildAuthFetch(nuxtApp) }) as unknown as AuthFetch
  }
  const deps = import.meta.server ? serverDeps(nuxtApp) : browserDeps(nuxtApp)
  const json = createAuthFetchCore($fetch as unknown as Sender, deps)
  const raw = createAuthFetchCore($fetch.raw as unknown as Sender, deps)
  const withDefaults = (core: Sender): Sender => (request, options) => core(request, mergeDefaults(defaults, options))
  return Object.assign(withDefaults(json), {
    raw: withDefaults(raw),
    native: (...args: Parameters<typeof fetch>) => fetch(...args),
    create: (more: AuthFetchOptions) => buildAuthFetch(nuxtApp, mergeDefaults(defaults, more)),
  }) as unknown as AuthFetch
}

/** The app's fetch helper (built once per Nuxt app; also provided as `$authFetch`). */
export function getAuthFetch(nuxtApp: NuxtApp): AuthFetch {
  return (authRuntime(nuxtApp).fetcher ??= buildAuthFetch(nuxtApp)) as AuthFetch
}

/**
 * `$fetch` with the bearer token on same-origin URLs only; on a 401 one shared refresh and one retry,
 * a failed refresh goes to `<redirect.error>?error=token_refresh_failed`.
 */
export function useAuthFetch(): AuthFetch {
  return getAuthFetch(useNuxtApp())
}

function firstString(value: unknown): string | undefined {
  const first = Array.isArray(value) ? value[0] : value
  return typeof first === 'string' && first ? first : undefined
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

async function postWithToken(nuxtApp: NuxtApp, path: string, body?: Record<string, unknown>): Promise<string> {
  return tokenOf(await postAuth(path, body, await currentToken(nuxtApp)))
}

async function exchangeCode(nuxtApp: NuxtApp, query: Record<string, unknown>): Promise<void> {
  const { redirect, endpoints } = publicAuthConfig(nuxtApp)
  const go = (path: string) => goTo(nuxtApp, path, { replace: true })
  const fail = (error: string, description?: string) => go(withQuery(redirect.error, { error, error_description: description }))
  const providerError = firstString(query.error)
  if (providerError) return void (await fail(providerError, firstString(query.error_description)))
  const code = firstString(query.code)
  if (!code) return void (await fail('missing_code', 'The login returned no authorization code.'))
  const runtime = authRuntime(nuxtApp)
  if (runtime.exchanging === code) return
  runtime.exchanging = code
  const chosenHere = runtime.afterLogin
  runtime.afterLogin = undefined
  setPending(nuxtApp, true)
  let answer: unknown
  try {
    answer = await postAuth(endpoints.tokenPath, { code })
    setAccessToken(nuxtApp, tokenOf(answer))
  }
  catch (error) {
    clearSession(nuxtApp)
    const fallbackCode = statusOf(error) ? 'token_exchange_failed' : 'network_error'
    return void (await fail(errorField(error, 'error') ?? fallbackCode, errorField(error, 'message') ?? 'The login could not be completed.'))
  }
  finally {
    runtime.exchanging = undefined
  }
  const chosen = (answer as { redirect?: unknown }).redirect ?? chosenHere
  await go(safeRedirect(chosen, redirect.success, [endpoints.callbackPath]))
}

/** The session of the app: claims, login, logout, refresh and impersonation (state in `useState`, the token in memory only). */
export function useAuth(): UseAuthReturn {
  const nuxtApp = useNuxtApp()
  const config = publicAuthConfig(nuxtApp)
  const session = sessionState(nuxtApp)
  const user = computed(() => session.value.user)

  // The passkey ceremonies as the provider's build step registered them; without the provider the loader is
  // undefined and the bundler drops these branches.
  const loadPasskeyClient = passkeyClient
  const orgs = organizations
  const passkeys = async (load: NonNullable<typeof passkeyClient>) => ({ lib: await load(), deps: { nuxtApp, token: () => currentToken(nuxtApp) } })

  async function login(provider: string, options: LoginOptions = {}): Promise<void> {
    if (loadPasskeyClient && provider === 'passkey') {
      const { lib, deps } = await passkeys(loadPasskeyClient)
      return lib.loginWithPasskey(deps, options)
    }
    // Without the provider the loader is undefined and the bundler drops this branch.
    if (magicLinkClient && provider === 'magicLink') return (await magicLinkClient()).requestMagicLink(nuxtApp, options)
    await navigateTo(joinBase(nuxtApp.$config.app.baseURL, loginUrl(config.endpoints.loginPath, provider, options)), { external: true })
  }

  async function logout(options: LogoutOptions = {}): Promise<void> {
    let answer: unknown
    try {
      // JSON leaves an undefined postLogoutRedirectUri out.
      answer = await postAuth(config.endpoints.logoutPath, options.provider ? { provider: true, postLogoutRedirectUri: options.postLogoutRedirectUri } : undefined)
    }
    finally {
      endSession(nuxtApp)
    }
    // With `provider`, the provider's end-session page (the server answers only a configured or discovered one; it comes back to a registered page of the app).
    const redirect = (answer as { redirect?: unknown } | undefined)?.redirect
    await goTo(nuxtApp, typeof redirect === 'string' ? redirect : config.redirect.logout, { external: typeof redirect === 'string' })
  }

  async function refresh(): Promise<boolean> {
    return !!(await refreshSession(nuxtApp)).token
  }

  async function impersonate(targetUserId: string, reason?: string): Promise<void> {
    // JSON leaves an undefined reason out.
    setAccessToken(nuxtApp, await postWithToken(nuxtApp, config.endpoints.impersonatePath, { targetUserId, reason: reason || undefined }))
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
    if (current) endSession(nuxtApp)
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
    // Without organizations the bundler drops the check: nobody has a permission.
    can: orgs ? permission => orgs.can(config.organizations?.roles, session.value.user, permission) : () => false,
    ...(loadPasskeyClient
      ? {
          registerPasskey: async (options) => {
            const { lib, deps } = await passkeys(loadPasskeyClient)
            return lib.registerPasskey(deps, options)
          },
          listPasskeys: async () => {
            const { lib, deps } = await passkeys(loadPasskeyClient)
            return lib.listPasskeys(deps)
          },
          deletePasskey: async (id) => {
            const { lib, deps } = await passkeys(loadPasskeyClient)
            return lib.deletePasskey(deps, id)
          },
        }
      : { registerPasskey: passkeysOff, listPasskeys: passkeysOff, deletePasskey: passkeysOff }),
  }
}

/** The passkey methods of an app built without the passkey provider. */
function passkeysOff(): Promise<never> {
  return Promise.reject(new Error('[svc-auth] Passkeys are off (svcAuth.providers.passkey)'))
}
