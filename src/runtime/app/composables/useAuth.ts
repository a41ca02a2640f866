/**
 * `useAuth()`: the implementation is in ../auth-client (bundled with the start-up plugin), its
 * types in ../auth-client-types.
 */
export type { LoginOptions, UseAuthReturn } from '../auth-client-types'
export type { PasskeyInfo, PasskeyLoginOptions, RegisterPasskeyOptions } from '../../passkey/passkey-types'
export { useAuth } from '../auth-client'
