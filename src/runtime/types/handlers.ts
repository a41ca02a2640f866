/**
 * Handlers of the host application, registered with `defineAuthHandlers` from a Nitro plugin:
 * what the module calls, with what, and when.
 */
import type { H3Event } from 'h3'
import type { AuthClaims, AuthUser, ProviderTokens } from './auth'
import type { UserInfoPayload } from './hooks'

/** A password account as the host's `findUser` returns it. */
export interface PasswordUser {
  /** The account's id: the subject of its tokens (with `sub`, which wins when both are set). */
  id?: string
  /** Email of the account. */
  email: string
  /** The stored hash (bcrypt, or what `hashPassword` made). */
  hashedPassword: string
  /** Other fields are kept with the user and reach `onUserPersist` and the claims handlers. */
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

/**
 * Handlers of the email and password provider (`defineAuthHandlers({ password })`). Every email
 * the module passes is in canonical form: trimmed, lowercase, internationalised domains in ASCII
 * (punycode).
 */
export interface PasswordHandlers {
  /**
   * The account of an email, or null when there is none. Required. Called by register (an account
   * must not exist yet) and again when its code is verified, by login (to check the password; an
   * unknown email costs the same work) and again at login-verify (fresh data for the token), after
   * the answer of reset-request (a code is sent only for an existing account), by reset-complete
   * and by change (the token's email).
   */
  findUser?: (email: string) => PasswordUser | null | undefined | Promise<PasswordUser | null | undefined>
  /**
   * Delivers a 6-digit code: `action` is `register`, `login` or `reset`; `details.link` is a ready
   * verify link, `details.expiresAt` when the code expires. Required. Called once per code, after
   * it is stored; if it throws, the code is discarded and the request answers 500 `send_failed`
   * (reset-request sends after its answer and only logs the failure).
   */
  sendVerificationCode?: (email: string, code: string, action: MagicCodeAction, details: VerificationCodeDetails) => void | Promise<void>
  /**
   * Replaces the built-in password policy (also its common-password check) for register,
   * reset-complete and change. Receives the new password in Unicode NFC; returns true to accept
   * it, or false or a list of violations (shown to the user in the 400 `password_policy` answer).
   * Without `hashPassword`, a password longer than bcrypt's 72 bytes is refused anyway.
   */
  validatePassword?: (password: string) => boolean | string[] | Promise<boolean | string[]>
  /**
   * Replaces bcrypt for new hashes (register, reset-complete, change, and the dummy hash that
   * unknown emails are checked against). Receives the new password in Unicode NFC; must return a
   * non-empty string. With it, bcrypt's 72-byte limit no longer applies.
   */
  hashPassword?: (password: string) => string | Promise<string>
  /**
   * Replaces bcrypt's check (login, change): the typed password (in NFC, then as typed) against
   * the stored `hashedPassword`. Only `true` accepts; anything else, a throw included, refuses.
   */
  verifyPassword?: (password: string, hash: string) => boolean | Promise<boolean>
  /** Alternative name of `sendVerificationCode` (used when that one is not set). */
  onMagicCodeGenerated?: PasswordHandlers['sendVerificationCode']
  /** Alternative name of `findUser` (used when that one is not set). */
  onUserLookup?: PasswordHandlers['findUser']
  /**
   * Stores an account's hash, when no global `onUserPersist` is registered (that one wins): at
   * register-verify and login-verify (before the login pipeline) and at reset-complete and change
   * (the new hash). An object it returns is merged into the user, and its `id` (else `sub`)
   * becomes the subject of the tokens.
   */
  onUserPersist?: (email: string, hashedPassword: string) => unknown | Promise<unknown>
  /**
   * Custom claims of password logins: the user after `onUserPersist`, and `tokens` is
   * `{ access_token: '' }`. Applied over the static `customClaims` option and under the global
   * `customClaims` handler.
   */
  customClaims?: (user: AuthUser, tokens: ProviderTokens) => Record<string, unknown> | void | undefined | Promise<Record<string, unknown> | void | undefined>
}

/** Handlers of impersonation (`defineAuthHandlers({ impersonation })`), used when it is enabled. */
export interface ImpersonationHandlers {
  /**
   * A user by id, as claims of their token; null or undefined when there is none (404
   * `not_found`). Required when impersonation is enabled. Called by POST /auth/impersonate with
   * the body's `targetUserId` (trimmed; an id or whatever identifier the host accepts, e.g. an
   * email), after the `svc:impersonate:fetchTarget` hook; and by POST /auth/unimpersonate with the
   * requester's `impersonation.originalUserLookupClaim` claim, to look them up afresh. The
   * subject is its `sub`, else its `id`; `email`, `name`, `picture` and `provider` are identity
   * claims; every other JSON value becomes a custom claim. An error it throws with a status
   * (e.g. 403 for another organisation) is the answer.
   */
  fetchTarget?: (targetId: string, event: H3Event) => AuthClaims | Record<string, unknown> | null | undefined | Promise<AuthClaims | Record<string, unknown> | null | undefined>
  /**
   * Whether `requester` (the verified claims of the caller's token) may impersonate `targetId`
   * (the body's `targetUserId`). Called after the `svc:impersonate:check` hook and before the
   * target is fetched; false answers 403 `forbidden`. Without it, anyone whose target
   * `fetchTarget` finds may impersonate: authorise in the check hook or here.
   */
  canImpersonate?: (requester: AuthClaims, targetId: string, event: H3Event) => boolean | Promise<boolean>
}

/** Second argument of the global `onUserPersist`. */
export interface UserPersistContext {
  /** Name of the provider of the login (`password` also for reset and change). */
  provider: string
  /** The request that completes the login, or sets the new password. */
  event: H3Event
}

/** Host handlers, registered with `defineAuthHandlers` from a Nitro plugin. */
export interface AuthHandlers {
  /**
   * Called on every login (OAuth, mock, password), after the provider's own `onUserInfo` and
   * before the `svc:userInfo` hook, with the profile as the provider gave it. A user it returns
   * replaces the profile for the rest of the login (return nothing to keep it).
   */
  onUserInfo?: (payload: UserInfoPayload) => AuthUser | void | undefined | Promise<AuthUser | void | undefined>
  /**
   * Stores the user. Called on every login after the `svc:userInfo` hook, with `sub` already
   * qualified (`<provider>:<provider sub>`; password accounts: their id, else
   * `password:<email>`); for password logins, resets and changes also with `email` and
   * `hashedPassword`. An object it returns is merged into the user, and its `id` (else `sub`)
   * becomes the subject of the tokens: return the host's own id so that one account is reached
   * from several providers. An error it throws (e.g. 403 for a blocked account) ends the login.
   */
  onUserPersist?: (user: AuthUser, context: UserPersistContext) => Record<string, unknown> | void | undefined | Promise<Record<string, unknown> | void | undefined>
  /**
   * Claims added to every access token of a user, over those of the login provider. Called at
   * login (after `onUserPersist`), by `createAuthorizationCode`, and again each time a session
   * mints a token: every refresh and every SSR token (with the user as stored with the session,
   * secrets stripped). Only JSON values are kept; reserved and identity claims are ignored.
   */
  customClaims?: (user: AuthUser) => Record<string, unknown> | void | undefined | Promise<Record<string, unknown> | void | undefined>
  /** Handlers of the email and password provider. */
  password?: PasswordHandlers
  /** Handlers of impersonation. */
  impersonation?: ImpersonationHandlers
}
