/**
 * Rate limits of the password endpoints (`svcAuth.rateLimit`). Counters live in the module's
 * storage mount (`tokenRefresh.storage`), so with Redis they hold across server instances.
 */

/** One endpoint's limits: fixed windows counted per client address and per email. */
export interface RateLimitRule {
  /** Requests per client address within `window` (0: no limit per address). */
  perIp: number
  /** Requests per email address within `window` (0: no limit per email). */
  perEmail: number
  /** Length of the window in seconds; it starts with the first request of a key. */
  window: number
}

export interface RateLimitOptions {
  /**
   * Enforce the limits below (answers 429 with `Retry-After`).
   * @default true
   */
  enabled: boolean
  /**
   * Addresses or CIDR ranges of reverse proxies whose `X-Forwarded-For` header is believed. The
   * client address is the socket's unless it is listed here; then it is the right-most address
   * of `X-Forwarded-For` that is not a trusted proxy.
   * @default []
   */
  trustedProxies: string[]
  /**
   * POST /auth/password/register.
   * @default { perIp: 10, perEmail: 5, window: 3600 }
   */
  register: RateLimitRule
  /**
   * POST /auth/password/login.
   * @default { perIp: 30, perEmail: 10, window: 900 }
   */
  login: RateLimitRule
  /**
   * POST /auth/password/reset-request.
   * @default { perIp: 10, perEmail: 5, window: 3600 }
   */
  resetRequest: RateLimitRule
  /**
   * register-verify, login-verify and reset-verify together (every request counts, right or
   * wrong, so nobody can walk the million codes without knowing the email).
   * @default { perIp: 20, perEmail: 0, window: 900 }
   */
  verify: RateLimitRule
  /**
   * POST /auth/password/reset-complete.
   * @default { perIp: 10, perEmail: 0, window: 900 }
   */
  resetComplete: RateLimitRule
  /**
   * POST /auth/password/change (per email: the account's).
   * @default { perIp: 10, perEmail: 5, window: 900 }
   */
  change: RateLimitRule
}

/** Names of the rules (the endpoints they apply to). */
export type RateLimitRuleName = Exclude<keyof RateLimitOptions, 'enabled' | 'trustedProxies'>
