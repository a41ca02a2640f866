import type { NuxtApp } from '#app'
import type { $Fetch, NitroFetchRequest } from 'nitropack'
import { useNuxtApp } from '#imports'
import { createAuthFetchCore, type AuthFetchDeps, type AuthFetchOptions } from '../lib/auth-fetch'
import { isAuthEndpoint } from '../lib/paths'
import { authRuntime, handleRefreshFailure, pendingRefresh, publicAuthConfig, refreshSession, sessionState, tokenState } from '../state'

export { ACCESS_TOKEN_STATE } from '../state'

/** The fetch helper: `$fetch` with the access token and the refresh rules. */
export type AuthFetch = $Fetch<unknown, NitroFetchRequest>

type Sender = (request: string | Request, options: AuthFetchOptions) => Promise<unknown>

const SSR_DISABLED = '[nuxt-svc-auth] useAuthFetch is not available on the server when enableSSR is false: fetch in the browser instead (for example useAsyncData(..., { server: false })).'

function browserDeps(nuxtApp: NuxtApp): AuthFetchDeps {
  const config = publicAuthConfig(nuxtApp)
  return {
    automaticRefresh: config.tokenRefresh.enabled && config.tokenRefresh.automaticRefresh,
    getToken: () => tokenState(nuxtApp).value,
    pendingRefresh: () => pendingRefresh(nuxtApp),
    refresh: () => refreshSession(nuxtApp),
    hasSession: () => !!sessionState(nuxtApp).value.user,
    onRefreshFailed: (outcome, { hadSession }) => handleRefreshFailure(nuxtApp, outcome, hadSession),
    isAuthEndpoint: (request, baseURL) => isAuthEndpoint(request, config.endpoints, baseURL),
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
  const config = publicAuthConfig(nuxtApp)
  if (import.meta.server && !config.enableSSR) {
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
  const runtime = authRuntime(nuxtApp)
  runtime.fetcher ??= buildAuthFetch(nuxtApp)
  return runtime.fetcher as AuthFetch
}

/**
 * `$fetch` that follows the client request helper rules:
 * - sends `Authorization: Bearer <token>` when an access token is in memory (browser) or, during
 *   SSR, the per-request SSR token; only to same-origin relative URLs, never to another host;
 * - on a 401, refreshes once (shared by concurrent requests) and retries once, unless
 *   `tokenRefresh.automaticRefresh` is false or the URL is an authentication endpoint;
 * - when that refresh fails, forgets the token and goes to
 *   `<redirect.error>?error=token_refresh_failed&error_description=...`;
 * - network errors are not retried; every other failure reaches the caller.
 * With `enableSSR: false` it refuses to run on the server.
 */
export function useAuthFetch(): AuthFetch {
  return getAuthFetch(useNuxtApp())
}
