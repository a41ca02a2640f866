/**
 * `usePassword()`: the email and password flows from the browser (auto-imported when
 * `providers.password` is set; an app without the provider ships none of it). It lives in its own
 * module, imported only by the pages that use it, so it never reaches the entry chunk with
 * `useAuth`.
 */
import type { NuxtApp } from '#app'
import type { ComputedRef, Ref } from 'vue'
import { computed } from 'vue'
import { useNuxtApp, useState } from '#imports'
import { passwordRoutePath } from '../password-paths'
import type { PasswordCodeAction, PasswordError, PasswordLoginOptions, PasswordVerifyOptions, PendingPasswordCode } from '../password-types'
import { isRelativePath } from '../../shared/paths'
import { getAuthFetch } from '../../app/auth-client'
import { statusOf } from '../../app/lib/auth-fetch'
import { authErrorOf, authRuntime, goTo, inApp, postAuth, publicAuthConfig, refreshSession } from '../../app/state'

export type { PasswordCodeAction, PasswordError, PasswordLoginOptions, PasswordVerifyOptions, PendingPasswordCode } from '../password-types'

/** Key of the step waiting for its emailed code (`useState`; set in the browser only). */
export const PASSWORD_STATE = 'svc-auth:password'

/** What `usePassword()` returns. Every call rejects with the module's error answer when refused (see `errorOf`). */
export interface UsePasswordReturn {
  /** The step waiting for its emailed code (after `register`, `login` or `requestReset`), or null. */
  pending: ComputedRef<PendingPasswordCode | null>
  /**
   * POST `<authPath>/password/register`: checks the policy and sends a code to `email`
   * (action `register`). The account exists once `verify(code)` succeeds.
   */
  register(email: string, password: string, options?: PasswordLoginOptions): Promise<void>
  /**
   * POST `<authPath>/password/login`: checks the password and sends a code to `email` (action
   * `login`). Rejects with `invalid_credentials` for an unknown email and a wrong password alike.
   */
  login(email: string, password: string, options?: PasswordLoginOptions): Promise<void>
  /**
   * POST `<authPath>/password/<action>-verify` with the emailed code (the pending step's action
   * and email unless given), then goes where the server answers, replacing the page in the
   * history: after `register` and `login` the callback page, which finishes the login like any
   * other and lands on the `redirect` chosen (else `redirect.success`), or the second-factor page
   * when the account has one; after `requestReset` the reset page (`resetPasswordPath?session=`).
   * A verified code ends its pending step; a refused one keeps it, so the user can type it again.
   */
  verify(code: string, options?: PasswordVerifyOptions): Promise<void>
  /**
   * POST `<authPath>/password/reset-request`: sends a reset code to `email` if it has an account.
   * Resolves the server's message, which is the same whether or not the account exists.
   */
  requestReset(email: string): Promise<string>
  /**
   * POST `<authPath>/password/reset-complete`: sets the new password with the reset page's
   * `?session=` (valid 5 minutes, in the browser that verified the code). Every session of the
   * account ends; the user logs in again with the new password.
   */
  completeReset(sessionId: string, newPassword: string): Promise<void>
  /**
   * POST `<authPath>/password/change` (logged in, with the access token): checks the current
   * password and sets the new one; the user's other sessions end, this one stays. A 401 refreshes
   * the session once and retries once.
   */
  change(currentPassword: string, newPassword: string): Promise<void>
  /** Forgets the pending step (a "Back" button of the code form). */
  cancel(): void
  /** `{ error, message }` of a refused call (the module's error body), for showing it. */
  errorOf(error: unknown): PasswordError
}

/** The pending step of the app (`useState`). */
function pendingState(nuxtApp: NuxtApp): Ref<PendingPasswordCode | null> {
  return inApp(nuxtApp, () => useState<PendingPasswordCode | null>(PASSWORD_STATE, () => null))
}

/** The `redirect` to keep: a relative path, else none. */
function relativeOrNone(path: unknown): string | undefined {
  return isRelativePath(path) ? path : undefined
}

/**
 * The password provider's calls: register, login, the emailed code, reset and change. The step
 * waiting for a code lives in `useState` of the Nuxt app, so a code form anywhere in the page can
 * call `verify(code)` alone.
 */
export function usePassword(): UsePasswordReturn {
  const nuxtApp = useNuxtApp()
  const { endpoints } = publicAuthConfig(nuxtApp)
  const path = (name: string) => passwordRoutePath(endpoints.authPath, name)
  const pending = pendingState(nuxtApp)

  /** Records the step now waiting for its emailed code. */
  const awaitCode = (action: PasswordCodeAction, email: string, redirect?: string) => {
    pending.value = { action, email, ...(redirect ? { redirect } : {}) }
  }

  return {
    pending: computed(() => pending.value),
    register: async (email, password, options = {}) => {
      await postAuth(path('register'), { email, password })
      awaitCode('register', email, relativeOrNone(options.redirect))
    },
    login: async (email, password, options = {}) => {
      await postAuth(path('login'), { email, password })
      awaitCode('login', email, relativeOrNone(options.redirect))
    },
    verify: async (code, options = {}) => {
      const step = pending.value
      const action = options.action ?? step?.action
      if (!action) throw new Error('[svc-auth] No code is awaited: call register, login or requestReset first, or pass { action }.')
      const same = step?.action === action ? step : undefined
      const email = options.email ?? same?.email
      // A JSON client gets `{ redirect }` instead of the 302 an HTML form gets.
      const answer = await $fetch<{ redirect?: unknown }>(path(`${action}-verify`), {
        method: 'POST',
        body: { code: String(code).trim(), email: email || undefined },
        headers: { accept: 'application/json' },
        credentials: 'include',
        retry: 0,
      })
      if (!isRelativePath(answer?.redirect)) throw new Error('The verification did not answer where to go next.')
      if (same) pending.value = null
      // The callback page (perhaps after the second-factor page) finishes the login and goes there.
      if (action !== 'reset') authRuntime(nuxtApp).afterLogin = relativeOrNone(options.redirect ?? same?.redirect)
      await goTo(nuxtApp, answer.redirect, { replace: true })
    },
    requestReset: async (email) => {
      const answer = await postAuth(path('reset-request'), { email }) as { message?: unknown } | null
      awaitCode('reset', email)
      return typeof answer?.message === 'string' ? answer.message : ''
    },
    completeReset: async (sessionId, newPassword) => {
      await postAuth(path('reset-complete'), { sessionId, newPassword })
    },
    change: async (currentPassword, newPassword) => {
      // An authentication endpoint: the fetch helper sends the token but never refreshes for it,
      // so a 401 (the token expired) refreshes once and retries once here.
      const send = () => getAuthFetch(nuxtApp)(path('change'), { method: 'POST', body: { currentPassword, newPassword } })
      try {
        await send()
      }
      catch (error) {
        if (statusOf(error) !== 401 || !(await refreshSession(nuxtApp)).token) throw error
        await send()
      }
    },
    cancel: () => {
      pending.value = null
    },
    errorOf: authErrorOf,
  }
}
