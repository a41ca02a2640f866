import type { AuthHandlers } from '../../../types/auth'

let registry: AuthHandlers = {}

/**
 * Registers the host handlers of the module (onUserInfo, onUserPersist, customClaims, password,
 * impersonation, passkey, twoFactor). Call it from a Nitro plugin; later calls merge over earlier
 * ones.
 *
 * ```ts
 * export default defineNitroPlugin(() => {
 *   defineAuthHandlers({ customClaims: user => ({ role: user.role ?? 'user' }) })
 * })
 * ```
 */
export function defineAuthHandlers(handlers: AuthHandlers): AuthHandlers {
  registry = {
    ...registry,
    ...handlers,
    password: { ...registry.password, ...handlers.password },
    impersonation: { ...registry.impersonation, ...handlers.impersonation },
    twoFactor: { ...registry.twoFactor, ...handlers.twoFactor },
    passkey: { ...registry.passkey, ...handlers.passkey },
  }
  return registry
}

/** The handlers registered so far. */
export function getAuthHandlers(): AuthHandlers {
  return registry
}

/** Forgets every handler (tests). */
export function resetAuthHandlers(): void {
  registry = {}
}
