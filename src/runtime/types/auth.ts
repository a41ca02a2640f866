/** The requester while impersonating (`event.context.originalUser`). */
export interface OriginalUser {
  sub: string
  email?: string
  name?: string
}

/** Coarse description of the client that started a session. Nothing secret. */
export interface AuthSessionClient {
  /** Browser and system family, e.g. `Firefox on Linux` (no versions). */
  userAgent?: string
  /** Network prefix of the client's address: `/24` for IPv4, `/48` for IPv6. */
  address?: string
}

/** One session (login) of a user, as `GET /auth/sessions` lists it. */
export interface AuthSession {
  /** Session id (the `sid` claim of its access tokens). */
  id: string
  /** True for the session of the access token that asked. */
  current: boolean
  /** When the user logged in (ISO 8601). */
  createdAt: string
  /** When the session last refreshed its tokens (ISO 8601). */
  lastUsedAt: string
  /** Login provider (`google`, `password`, ...). */
  provider?: string
  client: AuthSessionClient
  /** Only in the host's lists (`listUserSessions`): `sub` of the user impersonating. */
  impersonatedBy?: string
}

/**
 * What an `auth` value asks of the active organization (`organizations` on): a permission its role grants
 * (`{ permission: 'project:write' }`), or one of its roles (`{ role: 'admin' }`, a list: any of them); both
 * given, both must hold. A logged-in user is needed first (401), then the check (403 `permission_denied`,
 * also when no organization is active).
 */
export type AuthAccessRule =
  | { permission: string, role?: string | string[] }
  | { role: string | string[], permission?: string }

/**
 * Value of the `auth` key in route rules: `true | 'required' | 'protected'` need a logged-in user
 * (a valid bearer token), `false | 'public' | 'skip'` do not, an {@link AuthAccessRule} needs a
 * permission or a role in the active organization (src/runtime/shared/auth-value.ts).
 */
export type AuthRouteRule = boolean | 'required' | 'protected' | 'public' | 'skip' | AuthAccessRule

/**
 * Value of `definePageMeta({ auth })`: the route-rule values (logged-in users; or anyone, never
 * protected), plus `'guest'` (logged-out visitors only).
 */
export type AuthPageMeta = AuthRouteRule | 'guest'

export type * from './identity'
export type * from './host-handlers'
export type * from './hooks'
