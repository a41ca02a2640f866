/** The `svc:*` Nitro runtime hooks of the module and their payloads. */
import type { H3Event } from 'h3'
import type { AuthClaims, AuthUser, ProviderTokens } from './identity'
import type { PasskeyInfo } from '../passkey/passkey-types'
import type { Organization, OrganizationInvitation, Team } from '../organizations/organization-types'
import type { AuditEvent, NewDevicePayload } from '../audit/audit-types'
import type { IdentityLinkedPayload, IdentityUnlinkedPayload } from '../identities/identity-types'

/** Payload of the `onUserInfo` handlers and of the `svc:userInfo` and `svc:success` hooks: one login. */
export interface UserInfoPayload {
  /** The provider's profile; in `svc:success` the final user, merged with what `onUserPersist` returned. */
  user: AuthUser
  /** Tokens of the login provider (never stored). Password logins: `{ access_token: '' }`. */
  tokens: ProviderTokens
  /** Name of the provider: `google`, `github`, a custom provider's name, `mock`, `password` or `passkey`. */
  provider: string
  /** The request that completes the login (the OAuth callback, or the verification of a code). */
  event: H3Event
}

/** Where an impersonation request came from (the audit fields of its hooks). */
export interface ImpersonationRequestOrigin {
  event: H3Event
  /** Client address (`X-Forwarded-For` only from `rateLimit.trustedProxies`). */
  ip: string
  /** The `User-Agent` header ('' when absent). */
  userAgent: string
}

/** Payload of `svc:impersonate:fetchTarget`, once the target is found; a hook that throws rejects the request. */
export interface ImpersonateFetchTargetPayload {
  /** Verified claims of the caller's access token (never an impersonated one). */
  requester: AuthClaims
  /** The body's `targetUserId`, trimmed. */
  targetUserId: string
  event: H3Event
}

/** Payload of `svc:impersonate:check`, before the target is looked up; a throw rejects with its status. */
export interface ImpersonateCheckPayload extends ImpersonateFetchTargetPayload, ImpersonationRequestOrigin {
  /** The body's `reason`, trimmed; undefined when absent or empty. */
  reason?: string
}

/** Payload of `svc:impersonate:start`, before the answer; a hook that throws rolls the impersonation back. */
export interface ImpersonateStartPayload extends Omit<ImpersonateCheckPayload, 'targetUserId'> {
  /** Claims of the impersonated token exactly as signed (with `impersonation` and `sid`). */
  targetUser: AuthClaims
  /** When the impersonation began (its `impersonatedAt`). */
  timestamp: Date
}

/** Payload of `svc:impersonate:end`, before the answer; a hook that throws keeps the impersonation. */
export interface ImpersonateEndPayload extends ImpersonationRequestOrigin {
  /** Claims of the requester's new access token, exactly as signed. */
  restoredUser: AuthClaims
  /** Verified claims of the impersonated access token the request carried. */
  impersonatedUser: AuthClaims
  /** When the impersonation ended. */
  timestamp: Date
}

/** Why a session ended (`refresh_token_reused`: a rotated token came back, theft; `host`: `revokeUserSession(s)`; `provider_logout`: the OpenID provider's back-channel logout). */
export type SessionRevocationReason = 'logout' | 'refresh_token_reused' | 'password_reset' | 'password_change' | 'two_factor_change' | 'impersonation' | 'user' | 'host' | 'provider_logout'

/** Payload of `svc:session:revoked`. */
export interface SessionRevokedPayload {
  /** The session's id: the `sid` claim of its access tokens. */
  sessionId: string
  /** `sub` of the session's user. */
  userId: string
  reason: SessionRevocationReason
}

/** What every second-factor and passkey hook receives: whose it is, and the request. */
export interface UserEventPayload {
  /** `sub` of the user (their bearer token's, or the login's). */
  userId: string
  /** The request (address, user agent for the audit trail). */
  event: H3Event
}

/** How a second factor was proved: a TOTP code or a recovery code. */
export type TwoFactorMethod = 'code' | 'recovery_code'

/** Payload of `svc:twoFactor:challenged`: a login waits for its second factor (`enrol`: must enrol first). */
export interface TwoFactorChallengedPayload extends UserEventPayload {
  provider: string
  enrol: boolean
}

/** Payload of `svc:twoFactor:enrolled`: an enrolment was confirmed and saved. */
export interface TwoFactorEnrolledPayload extends UserEventPayload {
  /** `settings`: by a logged-in user; `login`: during a login that required it. */
  during: 'settings' | 'login'
}

/** Payload of `svc:twoFactor:verified`: the second factor of a login was proved. */
export interface TwoFactorVerifiedPayload extends UserEventPayload {
  provider: string
  method: TwoFactorMethod
}

/** Why a second-factor check failed. */
export type TwoFactorFailureReason = 'invalid_code' | 'replayed_code' | 'too_many_attempts' | 'failure_budget_exhausted' | 'binding_mismatch' | 'wrong_password'

/** Payload of `svc:twoFactor:failed`: a wrong or refused code (or password, when disabling). */
export interface TwoFactorFailedPayload extends UserEventPayload {
  /** Where: the login's verify step, regenerating recovery codes, or disabling. */
  stage: 'login' | 'regenerate' | 'disable'
  reason: TwoFactorFailureReason
}

/** Payload of `svc:twoFactor:recoveryCodeUsed`. */
export interface TwoFactorRecoveryCodeUsedPayload extends UserEventPayload {
  /** Unused recovery codes left. */
  remaining: number
}

/** Payload of `svc:twoFactor:recoveryCodesRegenerated`: the old codes no longer work. */
export interface TwoFactorRecoveryCodesRegeneratedPayload extends UserEventPayload {
  count: number
}

/** Payload of `svc:twoFactor:disabled`. */
export interface TwoFactorDisabledPayload extends UserEventPayload {
  /** What the user proved to turn it off. */
  method: 'password' | TwoFactorMethod
}

/** Payload of `svc:passkey:registered`, after `saveCredential`; a hook that throws is logged only. */
export interface PasskeyRegisteredPayload extends UserEventPayload {
  /** The new passkey as the user's list shows it (no public key). */
  credential: PasskeyInfo
  /** The authenticator verified the user (PIN, biometrics) while creating it. */
  userVerified: boolean
}

/** Payload of `svc:passkey:deleted`, after `deleteCredential`; a hook that throws is logged only. */
export interface PasskeyDeletedPayload extends UserEventPayload {
  /** The deleted passkey as the user's list showed it. */
  credential: PasskeyInfo
}

/** Payload of every `svc:org:*` hook: who changed what in which organization, after the change. */
export interface OrganizationChangePayload {
  /** Claims of the member who made the change (for `memberAdded` by invitation: the new member). */
  actor: AuthClaims
  /** The organization as it is after the change (for `deleted`: as it was). */
  organization: Organization
  /** The member the change is about: `sub`, the role after it, and the role before it when it changed. */
  member?: { userId: string, role?: string, previousRole?: string }
  /** The invitation created, revoked, or accepted (`memberAdded`). */
  invitation?: OrganizationInvitation
  /** The team the change is about. */
  team?: Team
  event: H3Event
}

/** Payload of `svc:provider:linkBroken`: the provider refused the kept refresh token of a user. */
export interface ProviderLinkBrokenPayload {
  /** `sub` of the user. */
  userId: string
  /** Name of the provider (`google`, a custom provider's name). */
  provider: string
}

/** Nitro runtime hooks emitted by the module. */
export interface SvcAuthHooks {
  /** Every login, before `onUserPersist`; a hook that throws ends the login. */
  'svc:userInfo': (payload: UserInfoPayload) => void | Promise<void>
  /**
   * Every login, before the authorization code (with a second factor: once it is proved); `user`
   * is final. A hook that throws ends the login.
   */
  'svc:success': (payload: UserInfoPayload) => void | Promise<void>
  /** See {@link ImpersonateCheckPayload}. */
  'svc:impersonate:check': (payload: ImpersonateCheckPayload) => void | Promise<void>
  /** See {@link ImpersonateFetchTargetPayload}. */
  'svc:impersonate:fetchTarget': (payload: ImpersonateFetchTargetPayload) => void | Promise<void>
  /** See {@link ImpersonateStartPayload}. */
  'svc:impersonate:start': (payload: ImpersonateStartPayload) => void | Promise<void>
  /** See {@link ImpersonateEndPayload}. */
  'svc:impersonate:end': (payload: ImpersonateEndPayload) => void | Promise<void>
  /** A session ended (every cause, see {@link SessionRevocationReason}); errors are logged only. */
  'svc:session:revoked': (payload: SessionRevokedPayload) => void | Promise<void>
  /** Second-factor hooks are audit points: an error they throw is logged only. See {@link TwoFactorChallengedPayload}. */
  'svc:twoFactor:challenged': (payload: TwoFactorChallengedPayload) => void | Promise<void>
  /** See {@link TwoFactorEnrolledPayload}. */
  'svc:twoFactor:enrolled': (payload: TwoFactorEnrolledPayload) => void | Promise<void>
  /** Before `svc:success` of the same login. See {@link TwoFactorVerifiedPayload}. */
  'svc:twoFactor:verified': (payload: TwoFactorVerifiedPayload) => void | Promise<void>
  /** See {@link TwoFactorFailedPayload}. */
  'svc:twoFactor:failed': (payload: TwoFactorFailedPayload) => void | Promise<void>
  /** See {@link TwoFactorRecoveryCodeUsedPayload}. */
  'svc:twoFactor:recoveryCodeUsed': (payload: TwoFactorRecoveryCodeUsedPayload) => void | Promise<void>
  /** See {@link TwoFactorRecoveryCodesRegeneratedPayload}. */
  'svc:twoFactor:recoveryCodesRegenerated': (payload: TwoFactorRecoveryCodesRegeneratedPayload) => void | Promise<void>
  /** See {@link TwoFactorDisabledPayload}. */
  'svc:twoFactor:disabled': (payload: TwoFactorDisabledPayload) => void | Promise<void>
  /** See {@link PasskeyRegisteredPayload}. */
  'svc:passkey:registered': (payload: PasskeyRegisteredPayload) => void | Promise<void>
  /** See {@link PasskeyDeletedPayload}. */
  'svc:passkey:deleted': (payload: PasskeyDeletedPayload) => void | Promise<void>
  /** An organization was created (its creator is its first member). Organization hooks are audit points (errors logged only); see {@link OrganizationChangePayload}. */
  'svc:org:created': (payload: OrganizationChangePayload) => void | Promise<void>
  /** An organization was renamed or got a new slug. Organization hooks are audit points (errors logged only); see {@link OrganizationChangePayload}. */
  'svc:org:updated': (payload: OrganizationChangePayload) => void | Promise<void>
  /** An organization was deleted with its members, teams and invitations. Organization hooks are audit points (errors logged only); see {@link OrganizationChangePayload}. */
  'svc:org:deleted': (payload: OrganizationChangePayload) => void | Promise<void>
  /** A user joined (by invitation: `invitation` is set). Organization hooks are audit points (errors logged only); see {@link OrganizationChangePayload}. */
  'svc:org:memberAdded': (payload: OrganizationChangePayload) => void | Promise<void>
  /** A member's role changed (`previousRole`). Organization hooks are audit points (errors logged only); see {@link OrganizationChangePayload}. */
  'svc:org:memberUpdated': (payload: OrganizationChangePayload) => void | Promise<void>
  /** A member was removed, or left (`actor.sub` is the member). Organization hooks are audit points (errors logged only); see {@link OrganizationChangePayload}. */
  'svc:org:memberRemoved': (payload: OrganizationChangePayload) => void | Promise<void>
  /** An invitation was sent. Organization hooks are audit points (errors logged only); see {@link OrganizationChangePayload}. */
  'svc:org:invitationCreated': (payload: OrganizationChangePayload) => void | Promise<void>
  /** An invitation was deleted before it was accepted. Organization hooks are audit points (errors logged only); see {@link OrganizationChangePayload}. */
  'svc:org:invitationRevoked': (payload: OrganizationChangePayload) => void | Promise<void>
  /** A team was created. Organization hooks are audit points (errors logged only); see {@link OrganizationChangePayload}. */
  'svc:org:teamCreated': (payload: OrganizationChangePayload) => void | Promise<void>
  /** A team was deleted. Organization hooks are audit points (errors logged only); see {@link OrganizationChangePayload}. */
  'svc:org:teamDeleted': (payload: OrganizationChangePayload) => void | Promise<void>
  /** A member joined a team or got another role in it. Organization hooks are audit points (errors logged only); see {@link OrganizationChangePayload}. */
  'svc:org:teamMemberUpdated': (payload: OrganizationChangePayload) => void | Promise<void>
  /** A member left a team or was removed from it. Organization hooks are audit points (errors logged only); see {@link OrganizationChangePayload}. */
  'svc:org:teamMemberRemoved': (payload: OrganizationChangePayload) => void | Promise<void>
  /** Every event of the audit log (`svcAuth.audit`), once stored: forward it to a SIEM. An error is logged and counted, never fails the request. */
  'svc:audit': (event: AuditEvent) => void | Promise<void>
  /** A login from a browser family and network the user has not logged in from within the log's retention (`svcAuth.audit`; not the first login the log knows of): email "new sign-in". Errors logged only. */
  /** The provider refused a user's kept refresh token (`invalid_grant`): their link is broken until they log in with it again. An audit point: errors logged only. See {@link ProviderLinkBrokenPayload}. */
  'svc:provider:linkBroken': (payload: ProviderLinkBrokenPayload) => void | Promise<void>
  'svc:login:newDevice': (payload: NewDevicePayload) => void | Promise<void>
  /** A provider identity was linked to a user (`via`: a new account's first login, the same verified email, the user's own link). An audit point: errors logged only. See {@link IdentityLinkedPayload}. */
  'svc:identity:linked': (payload: IdentityLinkedPayload) => void | Promise<void>
  /** A user unlinked a provider identity. An audit point: errors logged only. See {@link IdentityUnlinkedPayload}. */
  'svc:identity:unlinked': (payload: IdentityUnlinkedPayload) => void | Promise<void>
}
