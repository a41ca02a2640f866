/** `useMagicLink()`: auto-imported only when `providers.magicLink` is set. */
import { computed, type ComputedRef } from 'vue'
import { useNuxtApp } from '#imports'
import type { MagicLinkElsewhere, PendingMagicLink } from '../magic-link-types'
import { authErrorOf } from '../../app/state'
import { enterMagicLinkCode, pendingMagicLink, redeemMagicLink, requestMagicLink } from './magic-link-client'

export interface UseMagicLinkReturn {
  /** The link this browser asked for, while it waits (memory only: a reload forgets it). */
  pending: ComputedRef<PendingMagicLink | null>
  /** Emails a login link (as `useAuth().login('magicLink', { email, redirect })`); the answer is the same for every address. */
  request(email: string, options?: { redirect?: string }): Promise<void>
  /**
   * Logs this browser in with the short code shown where the link was opened (the pending link's email, or `email`).
   * Rejects with `invalid_verification_code`, `too_many_attempts` or `rate_limited` ({@link errorOf}).
   */
  enterCode(code: string, email?: string): Promise<void>
  /** The link's page: logs in here when this browser asked (or `thisDevice`), else resolves the short code to show. */
  redeem(token: string, options?: { thisDevice?: boolean }): Promise<MagicLinkElsewhere | undefined>
  /** `{ error, message }` of a refused call. */
  errorOf(error: unknown): { error: string, message: string }
}

export function useMagicLink(): UseMagicLinkReturn {
  const nuxtApp = useNuxtApp()
  return {
    pending: computed(() => pendingMagicLink(nuxtApp).value),
    request: (email, options = {}) => requestMagicLink(nuxtApp, { ...options, email }),
    enterCode: (code, email) => enterMagicLinkCode(nuxtApp, code, email),
    redeem: (token, options = {}) => redeemMagicLink(nuxtApp, token, options.thisDevice),
    errorOf: authErrorOf,
  }
}
