import type { H3Event } from 'h3'

/** A JSON value allowed inside a custom claim (objects one level deep). */
export type JsonPrimitive = string | number | boolean | null
export type ClaimValue = JsonPrimitive | JsonPrimitive[] | Record<string, JsonPrimitive | JsonPrimitive[]>
export type CustomClaims = Record<string, ClaimValue>

export interface ImpersonationContext {
  originalUserSub: string
  originalUserLookupId: string
  originalUserEmail?: string
  originalUserName?: string
  /** ISO 8601 */
  impersonatedAt: string
  reason?: string
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

export interface UserInfoPayload {
  user: AuthUser
  tokens: ProviderTokens
  provider: string
  event: H3Event
}

export interface PasswordUser {
  id?: string
  email: string
  hashedPassword: string
  [key: string]: unknown
}

export type MagicCodeAction = 'register' | 'login' | 'reset'

/** Fourth argument of `sendVerificationCode`: what a message needs besides the code. */
export interface VerificationCodeDetails {
  /**
   * Ready verify link `<authPath>/password/<action>-verify?code=<code>&flow=<flow>`, absolute on
   * `publicUrl` when it is set, else a relative path (the request's Host header is never used).
   * Prefer it to a link with the code alone: it is checked against this code's own attempt
   * count, while code-only links draw on a small global budget.
   */
  link: string
  /** Identifies this pending code (not secret on its own, and not the email). */
  flow: string
  /** When the code expires. */
  expiresAt: Date
}

export interface PasswordHandlers {
  findUser?: (email: string) => PasswordUser | null | undefined | Promise<PasswordUser | null | undefined>
  /**
   * Delivers a code (the spec's three arguments), with `details.link` a ready verify link.
   * The email is in canonical form: lowercase, internationalised domains in ASCII (punycode).
   */
  sendVerificationCode?: (email: string, code: string, action: MagicCodeAction, details: VerificationCodeDetails) => void | Promise<void>
  validatePassword?: (password: string) => boolean | string[] | Promise<boolean | string[]>
  hashPassword?: (password: string) => string | Promise<string>
  verifyPassword?: (password: string, hash: string) => boolean | Promise<boolean>
  /** Alternative name of `sendVerificationCode`. */
  onMagicCodeGenerated?: PasswordHandlers['sendVerificationCode']
  /** Alternative name of `findUser`. */
  onUserLookup?: PasswordHandlers['findUser']
  /** Alternative persistence handler (email, hashedPassword). */
  onUserPersist?: (email: string, hashedPassword: string) => unknown | Promise<unknown>
  /** Custom claims of password logins (applied over the static `customClaims` option). */
  customClaims?: (user: AuthUser, tokens: ProviderTokens) => Record<string, unknown> | void | undefined | Promise<Record<string, unknown> | void | undefined>
}

export interface ImpersonationHandlers {
  fetchTarget?: (targetId: string, event: H3Event) => AuthClaims | Record<string, unknown> | null | undefined | Promise<AuthClaims | Record<string, unknown> | null | undefined>
  canImpersonate?: (requester: AuthClaims, targetId: string, event: H3Event) => boolean | Promise<boolean>
}

export interface UserPersistContext {
  provider: string
  event: H3Event
}

/** Host handlers, registered with `defineAuthHandlers` from a Nitro plugin. */
export interface AuthHandlers {
  onUserInfo?: (payload: UserInfoPayload) => AuthUser | void | undefined | Promise<AuthUser | void | undefined>
  onUserPersist?: (user: AuthUser, context: UserPersistContext) => Record<string, unknown> | void | undefined | Promise<Record<string, unknown> | void | undefined>
  customClaims?: (user: AuthUser) => Record<string, unknown> | void | undefined | Promise<Record<string, unknown> | void | undefined>
  password?: PasswordHandlers
  impersonation?: ImpersonationHandlers
}

export interface ImpersonateCheckPayload {
  requester: AuthClaims
  targetUserId: string
  reason?: string
  event: H3Event
  ip: string
  userAgent: string
}

export interface ImpersonateFetchTargetPayload {
  requester: AuthClaims
  targetUserId: string
  event: H3Event
}

export interface ImpersonateStartPayload {
  requester: AuthClaims
  targetUser: AuthClaims
  reason?: string
  event: H3Event
  ip: string
  userAgent: string
  timestamp: Date
}

export interface ImpersonateEndPayload {
  restoredUser: AuthClaims
  impersonatedUser: AuthClaims
  event: H3Event
  ip: string
  userAgent: string
  timestamp: Date
}

/**
 * Why a session ended:
 * - `logout`: POST /auth/logout with a token of the session.
 * - `refresh_token_reused`: a rotated refresh token came back after the grace period (theft).
 * - `password_reset` / `password_change`: every session of the user, or every other one.
 * - `impersonation`: a session replaced by an impersonation, an impersonation that ended or was
 *   rolled back.
 * - `user`: the user ended it (`DELETE /auth/sessions/:id`, `POST /auth/sessions/revoke-others`).
 * - `host`: the host's code (`revokeUserSession`, `revokeUserSessions`), e.g. an admin page.
 */
export type SessionRevocationReason = 'logout' | 'refresh_token_reused' | 'password_reset' | 'password_change' | 'impersonation' | 'user' | 'host'

/** Payload of `svc:session:revoked`. */
export interface SessionRevokedPayload {
  /** The session's id: the `sid` claim of its access tokens. */
  sessionId: string
  /** `sub` of the session's user. */
  userId: string
  reason: SessionRevocationReason
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

/** Nitro runtime hooks emitted by the module. */
export interface SvcAuthHooks {
  'svc:userInfo': (payload: UserInfoPayload) => void | Promise<void>
  'svc:success': (payload: UserInfoPayload) => void | Promise<void>
  'svc:impersonate:check': (payload: ImpersonateCheckPayload) => void | Promise<void>
  'svc:impersonate:fetchTarget': (payload: ImpersonateFetchTargetPayload) => void | Promise<void>
  'svc:impersonate:start': (payload: ImpersonateStartPayload) => void | Promise<void>
  'svc:impersonate:end': (payload: ImpersonateEndPayload) => void | Promise<void>
  /** A session ended (every cause, see {@link SessionRevocationReason}); errors are logged only. */
  'svc:session:revoked': (payload: SessionRevokedPayload) => void | Promise<void>
}

/** Value of the `auth` key in route rules. */
export type AuthRouteRule = boolean | 'required' | 'protected' | 'public' | 'skip'
