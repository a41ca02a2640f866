/**
 * Every security event the module records (the `type` of an audit event), with what it means. One list for the
 * server, the log, the admin page and docs/audit.md (test/unit/audit-docs.test.ts keeps the table in step).
 */
export const SECURITY_EVENTS = {
  'login': 'A login: `success` when its session starts (the code was exchanged), `failure` when a first or second factor was refused (`subject`: the account, when it is known). Details: `provider`, `secondFactor` (`code`, `recovery_code`, `passkey`), `client` (`native`: a native app\'s session), `reason` and `stage` of a failure. An OAuth login\'s failures are one event per provider, reason and client each 5 minutes.',
  'logout': 'A session ended by its own logout, or by its OpenID provider\'s back-channel logout (`via: \'backchannel\'`, no actor). `failure`: a refused logout token (`provider`, `via`, `reason`; one event per provider, reason and client each 5 minutes).',
  'session.revoked': 'A session ended for another `reason`: `user` (from the sessions list), `host` (`revokeUserSession(s)`, or an administrator on the admin page, then the `actor`), `password_reset`, `password_change`, `two_factor_change`, `refresh_token_reused`.',
  'refresh.reused': 'A refresh token that was rotated already came back: theft suspected, its session is revoked (`failure`).',
  'session.refreshed': 'A session\'s tokens were refreshed (recorded only with `audit.refreshes`).',
  'code.refused': 'An authorization code was refused at the exchange (`failure`, `reason`): `unknown` (or expired, or used; one event per client each 5 minutes), `other_browser`, `other_channel` (a native app\'s code at the cookie exchange, or the reverse), `pkce` (a native code with the wrong verifier).',
  'password.changed': 'A logged-in user changed their password (`success`), or gave a wrong current password (`failure`).',
  'password.reset_requested': 'A password reset code was asked for (the answer never says whether the account exists).',
  'password.reset': 'A password was set with a reset code; the account\'s other sessions end (`revokedSessions`). `failure`: the reset was finished in another browser.',
  'rate_limited': 'Requests refused by a rate limit (`rule`, `per`: the counter): one event per rule and counter each 5 minutes, not one per request.',
  'lockout': 'Too many wrong codes: the code, the login or the budget is spent (`reason`: `too_many_attempts`, `budget_exhausted`; `stage`: `login`, `regenerate`, `disable`, or the emailed code\'s action).',
  'request.refused': 'A request the module refused for how it came, not for who sent it (`reason`: `cross_origin`, `frame`, `redirect`, `cookie_conflict`, `recent_login`, `browser` (a browser\'s request to a native endpoint), `other_channel` (a refresh token of the other channel: a browser session\'s in a body, a native one in the cookie)): one event per reason and client (an IPv6 address counts by its /64) each 5 minutes.',
  'impersonation.started': 'An administrator (`actor`) began to act as another user (`subject`); `details.reason` is the reason given.',
  'impersonation.ended': 'An impersonation ended; the administrator has their own session back.',
  'passkey.registered': 'A passkey was added to the account.',
  'passkey.deleted': 'A passkey was removed from the account.',
  'passkey.refused': 'A passkey was refused at registration (`reason`); one refused at login is a `login` failure.',
  'two_factor.challenged': 'A first factor was proved and the login waits for the second (`provider`, `enrol`): one never followed by a `login` may mean that another knows the password.',
  'two_factor.enrolled': 'Two-factor authentication was turned on (`during`: `settings` or `login`).',
  'two_factor.disabled': 'Two-factor authentication was turned off (`method` that proved it); `failure`: a wrong password or code (`reason`).',
  'two_factor.recovery_codes_regenerated': 'New recovery codes were made; the old ones no longer work. `failure`: a wrong code (`reason`).',
  'two_factor.recovery_code_used': 'A recovery code was used (`remaining`).',
  'org.created': 'An organization was created.',
  'org.updated': 'An organization was renamed or got a new slug.',
  'org.deleted': 'An organization was deleted with its members, teams and invitations.',
  'org.member_added': 'A member joined (`role`; by invitation or by its creation).',
  'org.member_updated': 'A member\'s role changed (`role`, `previousRole`).',
  'org.member_removed': 'A member left or was removed.',
  'org.invitation_created': 'An invitation was sent (`role`).',
  'org.invitation_revoked': 'An invitation was revoked.',
  'org.invitation_refused': 'An invitation was refused: sent to another, or an unverified, address (`failure`).',
  'org.team_created': 'A team was created.',
  'org.team_deleted': 'A team was deleted.',
  'org.team_member_updated': 'A member was added to a team, or their team role changed.',
  'org.team_member_removed': 'A member was removed from a team.',
  'provider.link_broken': 'A provider refused the refresh token of a user\'s kept tokens (`reason`: `invalid_grant`, or `no_refresh_token` for an expired token it cannot renew; `provider`): `getProviderToken` answers 409 `provider_link_broken` until the user logs in with it again.',
  'identity.linked': 'A provider identity was linked to the account (`provider`, `via`: `login` for a new account\'s first login, `email` for the same verified email with `identities.linkByEmail`, `link` for the user\'s own link).',
  'identity.unlinked': 'The user unlinked a provider identity (`provider`).',
  'identity.refused': 'A link, an unlink or a passkey deletion was refused (`failure`, `provider`: `passkey` for a passkey, `reason`): `identity_taken` (linked to another user), `provider_already_linked`, `founding_identity`, `last_login_method`, `unverified_email` (a login whose email matched an account, not linked for want of verification on one side).',
  'key.previous_used': 'A token or record was opened with a previous key (`key`): a rotation is under way. One event per key each hour.',
  'test_login': 'A login through the endpoint of builds for tests (never in a production build); `failure`: a request without its secret (one event per client each 5 minutes).',
} as const

/** The type of a security event ({@link SECURITY_EVENTS}). */
export type SecurityEventType = keyof typeof SECURITY_EVENTS

/** Whether an event reports something that happened (`success`) or something refused (`failure`). */
export type AuditOutcome = 'success' | 'failure'

/** A detail of an event: never a token, code, password, secret or full address. */
export type AuditDetail = string | number | boolean | null

/** What every security event holds, from the moment it is reported to the stored event. */
export interface SecurityEventFields {
  type: SecurityEventType
  outcome: AuditOutcome
  /** `sub` of who acted; null when nobody is known (a failed login of an unknown account). */
  actor: string | null
  /** `sub` of whom it concerns (the account logged in, the member removed); often the actor. */
  subject: string | null
  /** `sub` of the administrator acting through an impersonated session. */
  impersonator?: string
  /** The organization it happened in. */
  organization?: string
  /** The session (`sid`) it happened in or ended. */
  session?: string
  /** The client, coarsely: browser and system family, and the address's network (`/24`, `/48`). */
  client: { family: string | null, addressPrefix: string | null }
  details: Record<string, AuditDetail>
}

/** True for a type of {@link SECURITY_EVENTS}. */
export function isSecurityEventType(value: unknown): value is SecurityEventType {
  return typeof value === 'string' && Object.hasOwn(SECURITY_EVENTS, value)
}
