/** `useAuth()`: implemented in ../auth-client, typed in ../auth-client-types. */
export type { LoginOptions, UseAuthReturn } from '../auth-client-types'
export type { PasskeyInfo, PasskeyLoginOptions, RegisterPasskeyOptions } from '../../passkey/passkey-types'
export { useAuth } from '../auth-client'
