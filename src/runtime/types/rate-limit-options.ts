/** Rate limits of the password and passkey endpoints (`svcAuth.rateLimit`), counted in `tokenRefresh.storage`. */

import type { Duration } from './time-span'

/** One endpoint's limits: fixed windows per client address (IPv6: per /64) and per email. */
export interface RateLimitRule {
  /** Requests per client address within `window` (0: no limit per address). */
  perIp: number
  /** Requests per email address within `window` (0: no limit per email). */
  perEmail: number
  /** Length of the window, from the first request of a key. */
  window: Duration
}

/** Limits of the password login. */
export interface LoginRateLimitRule extends RateLimitRule {
  /** Failed logins per email and address, and per device cookie (0: no limit, no device cookies). */
  perEmailAndIp: number
  /** Lifetime of the device cookie, under which a known browser's failures count instead of `perEmail` (0: none). @default 31536000 */
  deviceCookieMaxAge: Duration
}

/** Failed verifications per email and action. */
export interface VerifyFailureBudget {
  /** Failures allowed within `window` (0: no limit). */
  perEmail: number
  /** Length of the window. */
  window: Duration
}

/** Global budget of code-only verification misses per action. */
export interface CodeOnlyBudget {
  /** Misses allowed per action within `window` (0: code-only verification is off). */
  misses: number
  /** Length of the window. */
  window: Duration
}

export interface RateLimitOptions {
  /** Enforce the limits below (429 with `Retry-After`). @default true */
  enabled: boolean
  /** Addresses or CIDR ranges of proxies whose `X-Forwarded-For` is believed. @default [] */
  trustedProxies: string[]
  /** Header the platform sets to the client's address (`cf-connecting-ip`…); '': the preset's, `false`: none. @default '' */
  clientAddressHeader: string | false
  /** POST /auth/password/register. @default { perIp: 10, perEmail: 5, window: 3600 } */
  register: RateLimitRule
  /** POST /auth/password/login (`perEmail`, `perEmailAndIp`: failures only). @default { perIp: 30, perEmailAndIp: 5, perEmail: 100, window: 900 } */
  login: LoginRateLimitRule
  /** POST /auth/password/reset-request. @default { perIp: 10, perEmail: 5, window: 3600 } */
  resetRequest: RateLimitRule
  /** register-verify, login-verify and reset-verify together, every request. @default { perIp: 20, perEmail: 0, window: 900 } */
  verify: RateLimitRule
  /** Misses of verification by the code alone, one budget per action for all clients. @default { misses: 25, window: 3600 } */
  codeOnlyVerify: CodeOnlyBudget
  /** Failed verifications of one email's codes of one action. @default { perEmail: 10, window: 86400 } */
  verifyFailures: VerifyFailureBudget
  /** POST /auth/password/reset-complete. @default { perIp: 10, perEmail: 0, window: 900 } */
  resetComplete: RateLimitRule
  /** POST /auth/password/change (per email: the account's). @default { perIp: 10, perEmail: 5, window: 900 } */
  change: RateLimitRule
  /** Passkey login options and verify. @default { perIp: 60, perEmail: 10, window: 900 } */
  passkey: RateLimitRule
  /** POST /auth/magic-link (per email: the address asked for). @default { perIp: 10, perEmail: 5, window: 3600 } */
  magicLink: RateLimitRule
  /** The invitation link, lookup and accept of organizations. @default { perIp: 30, perEmail: 0, window: 900 } */
  invitation: RateLimitRule
}

/** Names of the rules (the endpoints they apply to). */
export type RateLimitRuleName = Exclude<keyof RateLimitOptions, 'enabled' | 'trustedProxies' | 'clientAddressHeader' | 'codeOnlyVerify' | 'verifyFailures'>
