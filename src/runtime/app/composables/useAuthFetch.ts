/** `useAuthFetch()`; the implementation is in ../auth-client (bundled with the start-up plugin). */
export { useAuthFetch, type AuthFetch } from '../auth-client'
export { ACCESS_TOKEN_STATE } from '../state'
