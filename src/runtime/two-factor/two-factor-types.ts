/**
 * Options of the TOTP second factor (`svcAuth.twoFactor`). Off by default; with `enabled: true`
 * the routes under `<authPath>/two-factor/`, the second-factor page and `useTwoFactor()` are
 * added, and logins of users who need a second factor stop at that page.
 */

import type { Duration } from '../types/duration'

/** HMAC of the TOTP codes. Authenticator apps support SHA1 everywhere; SHA256/SHA512 only some. */
export type TwoFactorAlgorithm = 'SHA1' | 'SHA256' | 'SHA512'

export interface TwoFactorOptions {
  /**
   * Turn the second factor on: enrolment routes, the second-factor step of every login of a user
   * who needs it, the second-factor page and `useTwoFactor()`. Needs the host handlers
   * `defineAuthHandlers({ twoFactor: { find, save } })`.
   * @default false
   */
  enabled: boolean
  /**
   * The key of the second factor's data in the host's storage (32 bytes or more, e.g.
   * `openssl rand -base64 48`): the TOTP secrets are encrypted and the recovery codes HMACed with
   * keys derived from it. Set it, from the environment (`NUXT_SVC_AUTH_TWO_FACTOR_SECRET`), to a
   * value of its own: then rotating or removing `token.secret` never touches the second factors.
   * Empty: `token.secret` (and `token.previousSecrets`) key this data, as before this option
   * existed, and rotating `token.secret` away makes the second factors unreadable. Server only,
   * never in the public runtime config.
   * @default ''
   */
  secret: string
  /**
   * Keys that `twoFactor.secret` replaced: they still decrypt TOTP secrets (which are then saved
   * again under the current key at the user's next good code, `secret_resealed`) and match
   * recovery codes, but never encrypt or HMAC anything new. Keep a key here as long as any stored
   * state may use it: recovery codes are only made again when the user regenerates them. To move
   * a deployment with existing two-factor data to `twoFactor.secret`, put the current
   * `token.secret` here. From the environment a JSON array
   * (`NUXT_SVC_AUTH_TWO_FACTOR_PREVIOUS_SECRETS='["<old>"]'`).
   * @default []
   */
  previousSecrets: string[]
  /**
   * Name of the app shown in authenticator apps next to the account (the `issuer` of the
   * `otpauth://` URI). Empty: the host name of `publicUrl`, else `'Nuxt'`.
   * @default ''
   */
  issuer: string
  /**
   * Every user needs a second factor: a user without one enrols during the login (the login goes
   * on once the first code is confirmed). A host `isRequired` handler decides instead, per user.
   * @default false
   */
  requireForAll: boolean
  /**
   * Digits of a code (6 to 8). Kept with each enrolment: changing it later affects new
   * enrolments only.
   * @default 6
   */
  digits: number
  /**
   * How long a code is valid (one time step, 15 to 120 seconds; seconds or a duration string). Kept with each enrolment.
   * @default 30
   */
  period: Duration
  /**
   * HMAC of the codes. Kept with each enrolment.
   * @default 'SHA1'
   */
  algorithm: TwoFactorAlgorithm
  /**
   * Time steps accepted before and after the current one (clock drift of the phone), 0 to 2.
   * @default 1
   */
  window: number
  /**
   * Wrong codes allowed per pending login; past it the pending login is gone and the user logs
   * in again.
   * @default 5
   */
  maxAttempts: number
  /**
   * How long a pending login (first factor done, second factor asked) lives (seconds or a duration string).
   * @default 300
   */
  pendingLoginTTL: Duration
  /**
   * How long an enrolment started from the settings lives before it must be confirmed (seconds or a duration string).
   * @default 600
   */
  enrolmentTTL: Duration
  /**
   * Recovery codes made at enrolment and by each regeneration (1 to 20).
   * @default 10
   */
  recoveryCodes: number
  /**
   * Wrong codes allowed per user within `failureWindow`, across all pending logins and the
   * settings routes: someone who has the first factor cannot try 5 more codes with every fresh
   * login. Past it every code of the user is refused (429 with `Retry-After`) until the window
   * ends. 0: no limit.
   * @default 20
   */
  maxFailures: number
  /**
   * The window of `maxFailures` (seconds or a duration string; it starts with the first failure).
   * @default 86400
   */
  failureWindow: Duration
}
