/** Options of the TOTP second factor (`svcAuth.twoFactor`), off by default. */

import type { Duration } from '../types/time-span'

/** HMAC of the TOTP codes. Authenticator apps support SHA1 everywhere; SHA256/SHA512 only some. */
export type TwoFactorAlgorithm = 'SHA1' | 'SHA256' | 'SHA512'

export interface TwoFactorOptions {
  /** Turn the second factor on (needs the host handlers `twoFactor: { find, save }`). @default false */
  enabled: boolean
  /** Key of the second factor's stored data (32 bytes or more; empty: `token.secret`). Set one of its own. @default '' */
  secret: string
  /** Keys `secret` replaced: they still decrypt and match, never seal anything new. @default [] */
  previousSecrets: string[]
  /** App name shown in authenticator apps. Empty: the host of `publicUrl`, else `'Nuxt'`. @default '' */
  issuer: string
  /** Every user needs a second factor (else a host `isRequired` handler decides). @default false */
  requireForAll: boolean
  /** Digits of a code (6 to 8), kept with each enrolment. @default 6 */
  digits: number
  /** Time step of a code (15 to 120 seconds), kept with each enrolment. @default 30 */
  period: Duration
  /** HMAC of the codes, kept with each enrolment. @default 'SHA1' */
  algorithm: TwoFactorAlgorithm
  /** Time steps accepted before and after the current one (0 to 2). @default 1 */
  window: number
  /** Wrong codes per pending login, after which it is gone. @default 5 */
  maxAttempts: number
  /** Lifetime of a pending login (first factor done). @default 300 */
  pendingLoginTTL: Duration
  /** Lifetime of an unconfirmed enrolment. @default 600 */
  enrolmentTTL: Duration
  /** Recovery codes made at enrolment and by each regeneration (1 to 20). @default 10 */
  recoveryCodes: number
  /** Wrong codes per user within `failureWindow` across logins (then 429; 0: no limit). @default 20 */
  maxFailures: number
  /** The window of `maxFailures`, from the first failure. @default 86400 */
  failureWindow: Duration
}
