/**
 * Handlers of the host application, registered with `defineAuthHandlers` from a Nitro plugin:
 * what the module calls, with what, and when.
 */
import type { H3Event } from 'h3'
import type { AuthClaims, AuthUser, ProviderTokens } from './identity'
import type { UserInfoPayload } from './hooks'
import type { PasskeyHandlers } from '../passkey/passkey-types'

export type { PasskeyCredential, PasskeyHandlerContext, PasskeyHandlers, PasskeyInfo, PasskeyTransport } from '../passkey/passkey-types'

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
   * The account of an email, or null when there is none. Required. Called by every step that
   * needs the account, fresh each time (docs/extending.md); at login an unknown email costs the
   * same work as a known one, and reset-request sends a code to existing accounts only.
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
  /** Alternative name of `sendVerificationCode` (registered as it when that one is not set). */
  onMagicCodeGenerated?: PasswordHandlers['sendVerificationCode']
  /** Alternative name of `findUser` (registered as it when that one is not set). */
  onUserLookup?: PasswordHandlers['findUser']
  /**
   * The password provider's signature of the global `onUserPersist`, registered as it when no
   * global one is (that one wins): called where the global one is, for provider `password` only
   * (register-verify, login-verify, reset-complete, change), with the email and the (new) hash.
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
   * email), before the `svc:impersonate:fetchTarget` hook; and by POST /auth/unimpersonate with the
   * requester's `impersonation.originalUserLookupClaim` claim, to look them up afresh. The
   * subject is its `sub`, else its `id`; `email`, `name`, `picture` and `provider` are identity
   * claims; every other JSON value becomes a custom claim. An error it throws with a status
   * (e.g. 403 for another organisation) is the answer.
   */
  fetchTarget?: (targetId: string, event: H3Event) => AuthClaims | Record<string, unknown> | null | undefined | Promise<AuthClaims | Record<string, unknown> | null | undefined>
  /**
   * Whether `requester` (the verified claims of the caller's token) may impersonate `targetId`
   * (the body's `targetUserId`). Called first, before the `svc:impersonate:check` hook and the
   * target's lookup; false answers 403 `forbidden`. Without it, anyone whose target
   * `fetchTarget` finds may impersonate: authorise in the check hook or here.
   */
  canImpersonate?: (requester: AuthClaims, targetId: string, event: H3Event) => boolean | Promise<boolean>
}

/**
 * What the module keeps of a user's second factor, handed to the host's `twoFactor.save` and
 * given back by `twoFactor.find`. Store it as it is (a JSON column, or one column per field):
 * nothing in it is usable without `twoFactor.secret` (else `token.secret`).
 */
export interface TwoFactorState {
  /** Format of this object. */
  version: 1
  /**
   * The TOTP secret, encrypted by the module (aes-256-gcm, key derived from `twoFactor.secret`,
   * else `token.secret`; the previous secrets of the same option still decrypt it) and bound to
   * the user's id.
   */
  secret: string
  /** HMAC-SHA256 (hex, keyed like `secret`) of each unused recovery code; never the codes themselves. */
  recoveryCodes: string[]
  /** The code parameters the authenticator app was given at enrolment. */
  algorithm: 'SHA1' | 'SHA256' | 'SHA512'
  digits: number
  period: number
  /** When the enrolment was confirmed (ISO 8601). */
  enabledAt: string
  /** When the current recovery codes were made (ISO 8601). */
  recoveryCodesAt: string
}

/** Why the module calls `twoFactor.save`. */
export type TwoFactorSaveReason = 'enrolled' | 'recovery_code_used' | 'recovery_codes_regenerated' | 'secret_resealed' | 'disabled'

/** Third argument of `twoFactor.save`, second of `twoFactor.find`. */
export interface TwoFactorHandlerContext {
  /** The request that reads or changes the state. */
  event: H3Event
}

/** Second argument of `twoFactor.isRequired`. */
export interface TwoFactorRequiredContext {
  /** Provider of the login (`google`, `mock`, `password`, …). */
  provider: string
  /** The request that completes the first factor. */
  event: H3Event
}

/**
 * Handlers of the second factor (`defineAuthHandlers({ twoFactor })`). The state is the host's to
 * keep (the module never owns the user table); `find` and `save` are required when
 * `twoFactor.enabled`.
 */
export interface TwoFactorHandlers {
  /**
   * The second-factor state of a user (`userId` is the subject of their tokens, `sub`), or null
   * when they have none. Called at every login after `onUserPersist` and the claims (to decide
   * whether a second factor is asked), at every code check (verify, recovery-code regeneration,
   * disabling), by the status route and before an enrolment starts. A value that is not a state
   * of {@link TwoFactorState}'s shape fails the request (500): a broken row never turns the
   * second factor off.
   */
  find?: (userId: string, context: TwoFactorHandlerContext) => TwoFactorState | null | undefined | Promise<TwoFactorState | null | undefined>
  /**
   * Stores (or with `null` deletes) a user's state. Called when an enrolment is confirmed
   * (`enrolled`), after a recovery code was used (`recovery_code_used`: the state without it),
   * when the recovery codes are made again (`recovery_codes_regenerated`), after a login whose
   * secret was encrypted under a previous key (`secret_resealed`: the same secret under the
   * current `twoFactor.secret`, else `token.secret`) and when the second factor is turned off (`disabled`, state `null`). If it
   * throws, the request fails and nothing is answered as done.
   */
  save?: (userId: string, state: TwoFactorState | null, context: TwoFactorHandlerContext & { reason: TwoFactorSaveReason }) => void | Promise<void>
  /**
   * Whether a user without an enrolment must enrol before this login completes; replaces
   * `requireForAll` for them (`true`: the login stops at the second-factor page, which enrols them).
   * Called at every login of a user without a confirmed enrolment, after `onUserPersist`, with the
   * final user (its `sub` decided). Users with a confirmed enrolment are always asked for a code,
   * whatever it answers; logins that already proved two factors (`multiFactor`, a passkey with
   * user verification) are never asked.
   */
  isRequired?: (user: AuthUser, context: TwoFactorRequiredContext) => boolean | Promise<boolean>
}

/** Second argument of the global `onUserPersist`. */
export interface UserPersistContext {
  /** Name of the provider of the login (`password` also for reset and change). */
  provider: string
  /** The request that completes the login, or sets the new password. */
  event: H3Event
}

/** Claims of one provider: static, or a callback of the user and the provider's tokens. */
export type ProviderClaims = Record<string, unknown> | ((user: AuthUser, tokens: ProviderTokens) => Record<string, unknown> | void | undefined | Promise<Record<string, unknown> | void | undefined>)

/** The options of a provider route that join the login pipeline, each before its global handler and hook. */
export interface ProviderLoginHandlers {
  /** Claims of this provider: static, or `(user, tokens) => claims`; the global `customClaims` goes over them. */
  customClaims?: ProviderClaims
  /** Transforms the provider's user before the global `onUserInfo`; return a replacement or nothing. */
  onUserInfo?: AuthHandlers['onUserInfo']
  /** Called before `svc:success` and the authorization code. Throwing fails the login. */
  onSuccess?: (payload: UserInfoPayload) => void | Promise<void>
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
  /** Handlers of the second factor (`twoFactor.enabled`). */
  twoFactor?: TwoFactorHandlers
  /** Handlers of the passkey provider: the host's store of passkeys. */
  passkey?: PasskeyHandlers
}
