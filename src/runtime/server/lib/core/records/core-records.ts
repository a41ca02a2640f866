import { recordTypes } from '../../store/record-types'

/** The core's record kinds (see store/record-types.ts). */
export const CORE_RECORDS = recordTypes({
  /** A refresh token (refresh-token.ts). */
  refreshToken: 'rt',
  /** Marker of a rotated refresh token, kept to detect reuse (refresh-token.ts). */
  rotatedRefreshToken: 'rotated',
  /** A refresh-token family revoked after reuse (refresh-token.ts). */
  revokedFamily: 'family-revoked',
  /** A one-time authorization code (auth-code.ts). */
  authCode: 'code',
  /** A password-reset session (reset-session.ts). */
  resetSession: 'reset',
  /** A user's session map (user-sessions.ts). */
  userSessions: 'sessions',
  /** The map of revoked session ids (revoked-sessions.ts). */
  revokedSessions: 'revoked-sessions',
  /** Our sessions by an OpenID provider's session id (upstream-login.ts). */
  upstreamSid: 'upstream-sid',
  /** Our sessions by an OpenID provider's subject (upstream-login.ts). */
  upstreamSub: 'upstream-sub',
})
