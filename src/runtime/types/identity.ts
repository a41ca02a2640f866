/** Claims and users: the types every other public type builds on (imports nothing). */
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
  /** The scopes the provider granted (space-separated), when it said. */
  scope?: string
}
