/** `useTwoFactor()`: in a module of its own so it never reaches the entry chunk with `useAuth`. */
import { useNuxtApp } from '#imports'
import { underPath } from '../../shared/paths'
import { getAuthFetch } from '../../app/auth-client'
import { statusOf } from '../../app/lib/auth-fetch'
import { safeRedirect } from '../../app/lib/route-paths'
import { authErrorOf, goTo, postAuth, publicAuthConfig, refreshSession } from '../../app/state'

/** What the settings show: is a second factor on, and how many recovery codes are left. */
export interface TwoFactorStatus {
  enabled: boolean
  recoveryCodesLeft: number
}

/** A started enrolment: show `uri` as a QR code and `secret` for typing; both are shown once. */
export interface TwoFactorEnrolment {
  /** `otpauth://totp/<issuer>:<account>?secret=…`: the QR code's content. */
  uri: string
  secret: string
}

/** Proof of the second factor: a code of the authenticator app or a recovery code. */
export type TwoFactorProof = { code: string } | { recoveryCode: string }

/** An enrolment made during a login: the recovery codes to show once, then `redirect` to go on. */
export interface LoginEnrolment {
  recoveryCodes: string[]
  /** The callback page with the authorization code: pass it to `finishLogin`. */
  redirect: string
}

export interface UseTwoFactorReturn {
  /** GET `<authPath>/two-factor/status` (logged in). Every settings call refreshes and retries once on a 401. */
  status(): Promise<TwoFactorStatus>
  /** POST enrol (logged in): a new secret, pending until `confirm`. */
  enrol(): Promise<TwoFactorEnrolment>
  /** POST confirm with the app's first code: turns the second factor on; resolves the recovery codes (show them once). */
  confirm(code: string): Promise<string[]>
  /** POST recovery-codes with a current code: new recovery codes (the old ones stop working). */
  regenerateRecoveryCodes(code: string): Promise<string[]>
  /** POST disable with the account's password, a code or a recovery code. */
  disable(proof: { password: string } | TwoFactorProof): Promise<void>
  /** POST verify for the pending login `flow` (`?flow=`), then the callback page; rejects with the error answer. */
  verify(flow: string, proof: TwoFactorProof): Promise<void>
  /** POST login-enrol: the secret of the enrolment a login requires (`?enrol=1`). */
  startLoginEnrolment(flow: string): Promise<TwoFactorEnrolment>
  /** POST login-confirm with the app's first code: the login's recovery codes and where it goes on. */
  confirmLoginEnrolment(flow: string, code: string): Promise<LoginEnrolment>
  /** Goes on to the callback page of a completed login (`redirect` of `confirmLoginEnrolment`). */
  finishLogin(redirect: string): Promise<void>
  /** `{ error, message }` of a refused call (the module's error body), for showing it. */
  errorOf(error: unknown): { error: string, message: string }
}

const ARRAY_OF_STRINGS = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [])

/** The second factor's calls: settings with the access token, the login steps with the browser's cookie. */
export function useTwoFactor(): UseTwoFactorReturn {
  const nuxtApp = useNuxtApp()
  const { endpoints } = publicAuthConfig(nuxtApp)
  const path = (name: string) => underPath(endpoints.authPath, 'two-factor', name)
  const authFetch = getAuthFetch(nuxtApp)
  // Bearer APIs under `authPath`: the fetch helper never refreshes for them, so a 401 refreshes and retries once here.
  const withToken = async <T>(name: string, options: { method?: 'POST', body?: Record<string, unknown> } = {}): Promise<T> => {
    try {
      return await authFetch<T>(path(name), options) as T
    }
    catch (error) {
      if (statusOf(error) !== 401 || !(await refreshSession(nuxtApp)).token) throw error
      return await authFetch<T>(path(name), options) as T
    }
  }
  const post = <T>(name: string, body?: Record<string, unknown>) => withToken<T>(name, { method: 'POST', body })
  const finishLogin = async (redirect: string) => {
    await goTo(nuxtApp, safeRedirect(redirect, endpoints.callbackPath), { replace: true })
  }
  return {
    status: () => withToken<TwoFactorStatus>('status'),
    enrol: () => post<TwoFactorEnrolment>('enrol'),
    confirm: async code => ARRAY_OF_STRINGS((await post<{ recoveryCodes?: unknown }>('confirm', { code })).recoveryCodes),
    regenerateRecoveryCodes: async code => ARRAY_OF_STRINGS((await post<{ recoveryCodes?: unknown }>('recovery-codes', { code })).recoveryCodes),
    disable: async (proof) => {
      await post('disable', proof)
    },
    verify: async (flow, proof) => {
      const answer = await postAuth(path('verify'), { flow, ...proof }) as { redirect?: string }
      await finishLogin(answer.redirect ?? '')
    },
    startLoginEnrolment: async flow => await postAuth(path('login-enrol'), { flow }) as TwoFactorEnrolment,
    confirmLoginEnrolment: async (flow, code) => {
      const answer = await postAuth(path('login-confirm'), { flow, code }) as { redirect?: string, recoveryCodes?: unknown }
      return { recoveryCodes: ARRAY_OF_STRINGS(answer.recoveryCodes), redirect: answer.redirect ?? '' }
    },
    finishLogin,
    errorOf: authErrorOf,
  }
}
