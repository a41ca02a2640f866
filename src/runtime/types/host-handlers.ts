/** Handlers of the host application, registered with `defineAuthHandlers` from a Nitro plugin. */
import type { H3Event } from 'h3'
import type { AuthClaims, AuthUser, ProviderTokens } from './identity'
import type { UserInfoPayload } from './hooks'
import type { PasskeyHandlers } from '../passkey/passkey-types'
import type { OrganizationsHandlers } from '../organizations/organization-types'
import type { AuditHandlers } from '../audit/audit-types'
import type { IdentityHandlers } from '../identities/identity-types'

export type { AuditHandlers } from '../audit/audit-types'
export type { IdentityHandlerContext, IdentityHandlers, LinkedIdentity } from '../identities/identity-types'
export type { InvitationMessage, Organization, OrganizationInvitation, OrganizationMember, OrganizationsAdapter, OrganizationsHandlers, ResolveRolesInput, Team, UserOrganization } from '../organizations/organization-types'
export type { PasskeyCredential, PasskeyHandlerContext, PasskeyHandlers, PasskeyInfo, PasskeyTransport } from '../passkey/passkey-types'

/** A password account as the host's `findUser` returns it. */
export interface PasswordUser {
  /** The account's id: the subject of its tokens (with `sub`, which wins when both are set). */
  id?: string
  /** Email of the account. */
  email: string
  /** The stored hash (bcrypt, or what `hashPassword` made); absent for an account without a password (magic links only). */
  hashedPassword?: string
  /** Other fields are kept with the user and reach `onUserPersist` and the claims handlers. */
  [key: string]: unknown
}

/** Why `sendVerificationCode` is called: a password flow's code, or a magic link (`magic_link`: send `details.link`). */
export type MagicCodeAction = 'register' | 'login' | 'reset' | 'magic_link'

/**
 * What a message of `sendVerificationCode` is for: a code's action (or a magic link), or `account_exists`
 * (registration with `revealExistingAccounts: false` for an address that has an account: a notice to its
 * owner that carries no code; `code`, `link` and `flow` are '' and `expiresAt` is the time of the attempt).
 */
export type VerificationMessageAction = MagicCodeAction | 'account_exists'

/** Fourth argument of `sendVerificationCode`: what a message needs besides the code. */
export interface VerificationCodeDetails {
  /**
   * Verify link `<authPath>/password/<action>-verify?code=<code>&flow=<flow>`, absolute on `publicUrl`
   * when set (never the Host header). Prefer it: code-only links draw on a small global attempt budget.
   * `magic_link`: the login link `<magicLinkPath>#token=<token>`, the only secret of the message.
   */
  link: string
  /** Identifies this pending code (not secret on its own, and not the email); empty for `magic_link`. */
  flow: string
  /** When the code expires. */
  expiresAt: Date
  /** The locale of the request that asked for the code (docs/i18n.md), e.g. `de`. */
  locale: string
  /** The email in that locale, ready to send: it carries the code and the link. */
  message: { subject: string, text: string }
}

/** Handlers of the email and password provider. Emails are canonical: trimmed, lowercase, punycode domains. */
export interface PasswordHandlers {
  /**
   * Required: the account of an email, or null. Called fresh by every step that needs the account.
   * Magic links use it too (also with `providers.password` off).
   */
  findUser?: (email: string) => PasswordUser | null | undefined | Promise<PasswordUser | null | undefined>
  /**
   * Required: delivers a 6-digit code, once per code after it is stored. If it throws, the code is
   * discarded and the request answers 500 `send_failed` (reset-request, and register with
   * `revealExistingAccounts: false`, only log it). Also delivers the login links of `providers.magicLink`
   * (`action: 'magic_link'`, `code` empty: send `details.link`) and, with `revealExistingAccounts: false`,
   * the notice to an account's owner that someone tried to register with their address (`action:
   * 'account_exists'`, `code`, `link` and `flow` empty: tell them to reset the password if it was them).
   */
  sendVerificationCode?: (email: string, code: string, action: VerificationMessageAction, details: VerificationCodeDetails) => void | Promise<void>
  /**
   * Replaces the built-in password policy: receives the new password (NFC); returns true, or false or
   * violations (400 `password_policy`). Without `hashPassword`, over 72 bytes is still refused.
   */
  validatePassword?: (password: string) => boolean | string[] | Promise<boolean | string[]>
  /** Replaces bcrypt for new hashes (and the dummy hash): receives the password (NFC), returns a non-empty string. */
  hashPassword?: (password: string) => string | Promise<string>
  /** Replaces bcrypt's check of the typed password (NFC, then as typed); only `true` accepts. */
  verifyPassword?: (password: string, hash: string) => boolean | Promise<boolean>
  /** Alternative name of `sendVerificationCode` (registered as it when that one is not set). */
  onMagicCodeGenerated?: PasswordHandlers['sendVerificationCode']
  /** Alternative name of `findUser` (registered as it when that one is not set). */
  onUserLookup?: PasswordHandlers['findUser']
  /** Password-only form of the global `onUserPersist` (which wins when set), with the email and new hash. */
  onUserPersist?: (email: string, hashedPassword: string) => unknown | Promise<unknown>
  /** Custom claims of password logins (`tokens` is `{ access_token: '' }`), under the global `customClaims`. */
  customClaims?: (user: AuthUser, tokens: ProviderTokens) => Record<string, unknown> | void | undefined | Promise<Record<string, unknown> | void | undefined>
}

/** Handlers of impersonation (`defineAuthHandlers({ impersonation })`), used when it is enabled. */
export interface ImpersonationHandlers {
  /**
   * Required: a user's claims by id (`targetUserId`, or the `originalUserLookupClaim` on unimpersonate),
   * null for 404 `not_found`. Subject is `sub`, else `id`; an error it throws with a status is the answer.
   */
  fetchTarget?: (targetId: string, event: H3Event) => AuthClaims | Record<string, unknown> | null | undefined | Promise<AuthClaims | Record<string, unknown> | null | undefined>
  /**
   * Whether `requester` may impersonate `targetId`; called first, false answers 403 `forbidden`.
   * Without it (or the check hook) anyone may impersonate any user `fetchTarget` finds.
   */
  canImpersonate?: (requester: AuthClaims, targetId: string, event: H3Event) => boolean | Promise<boolean>
}

/** A user's second-factor state: the host stores it as is; useless without `twoFactor.secret`. */
export interface TwoFactorState {
  /** Format of this object. */
  version: 1
  /** The TOTP secret, aes-256-gcm under `twoFactor.secret` (else `token.secret`), bound to the user's id. */
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

/** Handlers of the second factor; `find` and `save` are required when `twoFactor.enabled`. */
export interface TwoFactorHandlers {
  /**
   * A user's state by `sub`, or null. A value not of {@link TwoFactorState}'s shape fails the request
   * (500): a broken row never turns the second factor off.
   */
  find?: (userId: string, context: TwoFactorHandlerContext) => TwoFactorState | null | undefined | Promise<TwoFactorState | null | undefined>
  /** Stores (`null`: deletes) a user's state for `context.reason`; if it throws, the request fails. */
  save?: (userId: string, state: TwoFactorState | null, context: TwoFactorHandlerContext & { reason: TwoFactorSaveReason }) => void | Promise<void>
  /**
   * Whether a user without an enrolment must enrol before this login completes (replaces
   * `requireForAll` for them). Enrolled users are always asked; multi-factor logins never.
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
  /** Called on every login before the `svc:userInfo` hook; a user it returns replaces the profile. */
  onUserInfo?: (payload: UserInfoPayload) => AuthUser | void | undefined | Promise<AuthUser | void | undefined>
  /**
   * Stores the user (`sub` is `<provider>:<provider sub>`). A returned object is merged into the user
   * and its `id` becomes the tokens' subject; an error it throws (e.g. 403) ends the login.
   */
  onUserPersist?: (user: AuthUser, context: UserPersistContext) => Record<string, unknown> | void | undefined | Promise<Record<string, unknown> | void | undefined>
  /**
   * Claims added to every access token (login, refresh, SSR), over the provider's. Only JSON values
   * are kept; reserved and identity claims are ignored.
   */
  customClaims?: (user: AuthUser) => Record<string, unknown> | void | undefined | Promise<Record<string, unknown> | void | undefined>
  /**
   * The locale of a request's answers and emails (`'de'`, `'fr-CH'`), before the `@nuxtjs/i18n` cookie and
   * `Accept-Language`; matched against the build's locales, so an unknown one (or undefined) leaves the choice to
   * them. An error it throws is logged and ignored. docs/i18n.md.
   */
  resolveLocale?: (event: H3Event) => string | undefined | Promise<string | undefined>
  /** Handlers of the email and password provider. */
  password?: PasswordHandlers
  /** Handlers of impersonation. */
  impersonation?: ImpersonationHandlers
  /** Handlers of the second factor (`twoFactor.enabled`). */
  twoFactor?: TwoFactorHandlers
  /** Handlers of the passkey provider: the host's store of passkeys. */
  passkey?: PasskeyHandlers
  /** Handlers of organizations (`svcAuth.organizations`). */
  organizations?: OrganizationsHandlers
  /** Handlers of the audit log (`svcAuth.audit`). */
  audit?: AuditHandlers
  /** Where provider identities are linked to users (`svcAuth.identities`). */
  identities?: IdentityHandlers
}
