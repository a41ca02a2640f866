/** A JSON value allowed inside a custom claim (objects one level deep). */
export type JsonPrimitive = string | number | boolean | null
export type ClaimValue = JsonPrimitive | JsonPrimitive[] | Record<string, JsonPrimitive | JsonPrimitive[]>
export type CustomClaims = Record<string, ClaimValue>

/** The `impersonation` claim of an impersonated access token. */
export interface ImpersonationContext {
  /** `sub` of the requester (the user impersonating). */
  originalUserSub: string
  /** The requester's `impersonation.originalUserLookupClaim` claim: how `fetchTarget` finds them again. */
  originalUserLookupId: string
  /** The requester's email, when their token had one. */
  originalUserEmail?: string
  /** The requester's name, when their token had one. */
  originalUserName?: string
  /** When the impersonation began (ISO 8601). */
  impersonatedAt: string
  /** The reason given at POST /auth/impersonate. */
  reason?: string
  /** The requester's custom claims, restored when the impersonation ends. */
  originalClaims?: CustomClaims
}

/** Payload of an access token. */
export interface AuthClaims {
  sub: string
  email?: string
  name?: string
  picture?: string
  provider?: string
  iss?: string
  aud?: string | string[]
  iat?: number
  exp?: number
  /** Session (refresh token family) the token was issued for. */
  sid?: string
  impersonation?: ImpersonationContext
  [claim: string]: unknown
}

/** The requester while impersonating (`event.context.originalUser`). */
export interface OriginalUser {
  sub: string
  email?: string
  name?: string
}

/** A user as it flows through login: provider profile merged with what the host returns. */
export interface AuthUser {
  sub?: string
  id?: string
  email?: string
  name?: string
  picture?: string
  [key: string]: unknown
}

export interface ProviderTokens {
  access_token: string
  refresh_token?: string
  id_token?: string
  expires_in?: number
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
 * Value of the `auth` key in route rules: `true | 'required' | 'protected'` need a logged-in user
 * (a valid bearer token), `false | 'public' | 'skip'` do not (src/runtime/shared/auth-value.ts).
 */
export type AuthRouteRule = boolean | 'required' | 'protected' | 'public' | 'skip'

/**
 * Value of `definePageMeta({ auth })`: the route-rule values (logged-in users; or anyone, never
 * protected), plus `'guest'` (logged-out visitors only).
 */
export type AuthPageMeta = AuthRouteRule | 'guest'

export type * from './host-handlers'
export type * from './hooks'
