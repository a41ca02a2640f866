/**
 * Every kind of record the module stores, by the namespace that starts its storage keys
 * (`<prefix><namespace>:<hmac(id)>`). One list, so two kinds can never share a namespace (a test
 * checks the values are unique) and a reader finds every kind in one place: each has its file in
 * this folder. `RecordStore.key` and `namedKey` take only these names.
 */
export const RECORD_TYPES = {
  /** A refresh token (records/refresh-token.ts). */
  refreshToken: 'rt',
  /** Marker of a rotated refresh token, kept to detect reuse (records/refresh-token.ts). */
  rotatedRefreshToken: 'rotated',
  /** A refresh-token family revoked after reuse (records/refresh-token.ts). */
  revokedFamily: 'family-revoked',
  /** A one-time authorization code (records/auth-code.ts). */
  authCode: 'code',
  /** An impersonation in progress, by family (records/impersonation.ts). */
  impersonation: 'impersonation',
  /** A password-reset session (records/reset-session.ts). */
  resetSession: 'reset',
  /** A user's session map (records/user-sessions.ts). */
  userSessions: 'sessions',
  /** The map of revoked session ids (records/revoked-sessions.ts). */
  revokedSessions: 'revoked-sessions',
  /** A pending emailed code, by action and email (records/magic-code.ts). */
  magicPending: 'magic',
  /** A pending emailed code, by action and code (records/magic-code.ts). */
  magicByCode: 'magic-code',
  /** A pending emailed code, by action and browser flow (records/magic-code.ts). */
  magicByFlow: 'magic-flow',
  /** Wrong guesses at one pending code (records/magic-code.ts). */
  magicAttempts: 'magic-attempts',
  /** Lookups by code alone that found nothing (records/magic-code.ts). */
  magicMisses: 'magic-misses',
  /** Codes issued per action and time slot (records/magic-code.ts). */
  magicIssued: 'magic-issued',
  /** Failed code verifications per email (records/magic-code.ts). */
  magicFailures: 'magic-failed',
  /** A rate-limit counter (records/rate-counter.ts). */
  rateCounter: 'rate',
  /** A started OAuth login, by its `state` (records/oauth-state.ts). */
  oauthState: 'oauth-state',
  /** An authorization code of the mock provider (records/mock-provider.ts). */
  mockCode: 'mock-code',
  /** An access token of the mock provider (records/mock-provider.ts). */
  mockToken: 'mock-token',
  /** A login waiting for its second factor, by flow id (records/two-factor.ts). */
  twoFactorLogin: 'two-factor-login',
  /** Code attempts at one pending second-factor login (records/two-factor.ts). */
  twoFactorAttempts: 'two-factor-attempts',
  /** Wrong second-factor codes per user (records/two-factor.ts). */
  twoFactorFailures: 'two-factor-failed',
  /** A TOTP time step a user has used, so its code works once (records/two-factor.ts). */
  twoFactorStep: 'two-factor-step',
  /** An enrolment waiting for its first code, by user or by login flow (records/two-factor.ts). */
  twoFactorEnrolment: 'two-factor-enrol',
  /** A recovery code that was used (claimed atomically) (records/two-factor.ts). */
  twoFactorRecovery: 'two-factor-recovery',
  /** A passkey challenge awaiting its answer, by ceremony and challenge (records/passkey-challenge.ts). */
  passkeyChallenge: 'passkey-challenge',
} as const

/** The namespace of a record kind. */
export type RecordType = typeof RECORD_TYPES[keyof typeof RECORD_TYPES]
