/** The public types of `useAuth()` (implementation: auth-client.ts). */
import type { ComputedRef } from 'vue'
import type { AuthClaims, AuthSession, OriginalUser } from '../types/auth'
import type { PasskeyInfo, PasskeyLoginOptions, RegisterPasskeyOptions } from '../passkey/passkey-types'
import type { LoginUrlOptions } from './lib/route-paths'

/** Options of `login()`: `redirect`, `query` for provider routes, `email` (a hint) for `'passkey'`, (required) for `'magicLink'`. */
export type LoginOptions = LoginUrlOptions & PasskeyLoginOptions

/** Options of `logout()`. */
export interface LogoutOptions {
  /**
   * Also end the session at the OpenID provider of its login (RP-Initiated Logout): the browser goes to the
   * provider's end-session page, which comes back to `postLogoutRedirectUri`. A session from elsewhere, or
   * from a provider without an end-session endpoint, goes to `redirect.logout` as without it.
   * @default false
   */
  provider?: boolean
  /** One of the provider's `postLogoutRedirectUrls`, exactly (400 otherwise). @default the first of them */
  postLogoutRedirectUri?: string
}

/** What `useAuth()` returns. */
export interface UseAuthReturn {
  /** Claims of the current access token (without `jti` and `sid`), or null when logged out. */
  user: ComputedRef<AuthClaims | null>
  isLoggedIn: ComputedRef<boolean>
  /** False only while the app does not know yet whether someone is logged in. */
  ready: ComputedRef<boolean>
  /** A refresh or code exchange is in flight. */
  loading: ComputedRef<boolean>
  /** The current token carries the `impersonation` claim. */
  isImpersonating: ComputedRef<boolean>
  /** While impersonating, the requester `{ sub, email?, name? }`; else null. */
  originalUser: ComputedRef<OriginalUser | null>
  /**
   * Goes to `<loginPath>/<provider>` (a full page load). `'passkey'` runs the WebAuthn ceremony in the page
   * and rejects with an `Error` named after the browser's refusal or the server's `data.error`. `'magicLink'`
   * emails a login link to `email` and resolves: the page stays, and `useMagicLink()` takes the short code if
   * the link is opened on another device.
   */
  login(provider: string, options?: LoginOptions): Promise<void>
  /** POST /auth/logout, forgets the token, then goes to `redirect.logout` (or with `provider`, to the provider's end-session page). */
  logout(options?: LogoutOptions): Promise<void>
  /** One refresh with the cookie (shared with any refresh in flight). True when it succeeded. */
  refresh(): Promise<boolean>
  /** POST /auth/impersonate; on success the app continues as the target user. */
  impersonate(targetUserId: string, reason?: string): Promise<void>
  /** POST /auth/unimpersonate; on success the app continues as the original user. */
  unimpersonate(): Promise<void>
  /** What the callback page does: exchanges `query.code` at POST /auth/token, then goes on (errors: `redirect.error`). */
  handleCallback(query: Record<string, unknown>): Promise<void>
  /** The in-memory access token after any refresh in flight (null on the server), for other clients; never store it. */
  getAccessToken(): Promise<string | null>
  /** GET /auth/sessions: the user's sessions, most recently used first, `current: true` on this one. Retries once on a 401. */
  listSessions(): Promise<AuthSession[]>
  /** DELETE /auth/sessions/:id: ends one of the user's sessions; ending the current one logs this app out (no redirect). */
  revokeSession(id: string): Promise<void>
  /** POST /auth/sessions/revoke-others: ends every other session of the user; resolves how many. */
  revokeOtherSessions(): Promise<number>
  /**
   * True when the user's role in the active organization (the token's `orgRole`) grants `permission`
   * (`resource:action`) in `organizations.roles`; false when logged out, with no organization active, and in
   * a build without organizations. Reactive (it reads the session state). The server decides: this only
   * shapes the page.
   */
  can(permission: string): boolean
  /** Creates a passkey for the logged-in user; rejects like `login('passkey')` (`InvalidStateError`: one exists). */
  registerPasskey(options?: RegisterPasskeyOptions): Promise<PasskeyInfo>
  /** GET `<authPath>/passkey/credentials`: the user's passkeys, newest first. */
  listPasskeys(): Promise<PasskeyInfo[]>
  /** DELETE `<authPath>/passkey/credentials/:id`: deletes one of the user's passkeys. */
  deletePasskey(id: string): Promise<void>
}
