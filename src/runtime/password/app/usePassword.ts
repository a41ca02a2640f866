/** `usePassword()`: in a module of its own so it never reaches the entry chunk with `useAuth`. */
import type { ComputedRef } from 'vue'
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
  /** POST `<authPath>/password/register`: checks the policy and emails a code; the account exists once `verify(code)` succeeds. */
  register(email: string, password: string, options?: PasswordLoginOptions): Promise<void>
  /** POST `<authPath>/password/login`: checks the password and emails a code (`invalid_credentials` for an unknown email alike). */
  login(email: string, password: string, options?: PasswordLoginOptions): Promise<void>
  /** POST `<authPath>/password/<action>-verify` with the emailed code, then goes where the server answers; a refused code keeps the pending step. */
  verify(code: string, options?: PasswordVerifyOptions): Promise<void>
  /** POST `<authPath>/password/reset-request`: resolves the server's message, the same whether or not the account exists. */
  requestReset(email: string): Promise<string>
  /** POST `<authPath>/password/reset-complete` with the reset page's `?session=`; every session of the account ends. */
  completeReset(sessionId: string, newPassword: string): Promise<void>
  /** POST `<authPath>/password/change` (logged in): the other sessions end, this one stays; a 401 refreshes and retries once. */
  change(currentPassword: string, newPassword: string): Promise<void>
  /** Forgets the pending step (a "Back" button of the code form). */
  cancel(): void
  /** `{ error, message }` of a refused call (the module's error body), for showing it. */
  errorOf(error: unknown): PasswordError
}

/** The `redirect` to keep: a relative path, else none. */
function relativeOrNone(path: unknown): string | undefined {
  return isRelativePath(path) ? path : undefined
}

/** The password provider's calls; the step waiting for a code lives in `useState`, so any code form can call `verify(code)`. */
export function usePassword(): UsePasswordReturn {
  const nuxtApp = useNuxtApp()
  const { endpoints } = publicAuthConfig(nuxtApp)
  const path = (name: string) => passwordRoutePath(endpoints.authPath, name)
  const pending = inApp(nuxtApp, () => useState<PendingPasswordCode | null>(PASSWORD_STATE, () => null))
  const awaitCode = (action: PasswordCodeAction, email: string, redirect?: string) => {
    pending.value = { action, email, ...(redirect ? { redirect } : {}) }
  }
  const start = (action: 'register' | 'login'): UsePasswordReturn['login'] => async (email, password, options = {}) => {
    await postAuth(path(action), { email, password })
    awaitCode(action, email, relativeOrNone(options.redirect))
  }

  return {
    pending: computed(() => pending.value),
    register: start('register'),
    login: start('login'),
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
      // The fetch helper never refreshes for an auth endpoint: a 401 refreshes once and retries once here.
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
