/** `useLinkedAccounts()`: in a module of its own (auto-imported when `svcAuth.identities` is set), never in the core client. */
import { useNuxtApp } from '#imports'
import { underPath } from '../../shared/paths'
import { getAuthFetch } from '../../app/auth-client'
import { statusOf } from '../../app/lib/auth-fetch'
import { authErrorOf, goTo, publicAuthConfig, refreshSession } from '../../app/state'
import type { LinkedAccountsAnswer } from '../identity-types'

export type { LinkedAccount, LinkedAccountsAnswer } from '../identity-types'

export interface UseLinkedAccountsReturn {
  /** GET `<authPath>/links`: the linked providers, and whether the account has a password and passkeys. */
  list(): Promise<LinkedAccountsAnswer>
  /**
   * POST `<authPath>/link/<provider>` (needs a recent login), then sends the browser to the provider. It comes back to
   * `redirect` (default `redirect.success`) with `?linked=<provider>`, or `?error=<code>`. `params` go on to the
   * provider as a login's query does (the mock provider's `user`).
   */
  link(provider: string, options?: { redirect?: string, params?: Record<string, string> }): Promise<void>
  /** DELETE `<authPath>/links/<provider>` (needs a recent login); refused for the last way to log in (`last_login_method`) and the identity the account was made with (`founding_identity`). */
  unlink(provider: string): Promise<void>
  /** `{ error, message }` of a refused call (the module's error body), for showing it. */
  errorOf(error: unknown): { error: string, message: string }
}

/** The calls of linked accounts, with the access token (a 401 refreshes and retries once). */
export function useLinkedAccounts(): UseLinkedAccountsReturn {
  const nuxtApp = useNuxtApp()
  const { authPath } = publicAuthConfig(nuxtApp).endpoints
  const authFetch = getAuthFetch(nuxtApp)
  const call = async <T>(path: string, options: { method?: 'POST' | 'DELETE', body?: Record<string, unknown> } = {}): Promise<T> => {
    try {
      return await authFetch<T>(path, options) as T
    }
    catch (error) {
      if (statusOf(error) !== 401 || !(await refreshSession(nuxtApp)).token) throw error
      return await authFetch<T>(path, options) as T
    }
  }
  return {
    list: () => call<LinkedAccountsAnswer>(underPath(authPath, 'links')),
    async link(provider, options = {}) {
      const query = options.params ? `?${new URLSearchParams(options.params)}` : ''
      const { redirect } = await call<{ redirect: string }>(`${underPath(authPath, 'link', encodeURIComponent(provider))}${query}`, { method: 'POST', body: options.redirect ? { redirect: options.redirect } : {} })
      await goTo(nuxtApp, redirect, { external: true })
    },
    async unlink(provider) {
      await call(underPath(authPath, 'links', encodeURIComponent(provider)), { method: 'DELETE' })
    },
    errorOf: authErrorOf,
  }
}
