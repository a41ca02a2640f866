/**
 * Rate limits of the password and passkey login endpoints (`svcAuth.rateLimit`). Counters live in the module's
 * storage mount (`tokenRefresh.storage`), so with Redis they hold across server instances.
 */

import type { Duration } from './duration'

/**
 * One endpoint's limits: fixed windows counted per client address and per email. IPv6 clients
 * are counted per /64 network (one host usually owns a whole /64).
 */
export interface RateLimitRule {
  /** Requests per client address within `window` (0: no limit per address). */
  perIp: number
  /** Requests per email address within `window` (0: no limit per email). */
  perEmail: number
  /** Length of the window (seconds or a duration string); it starts with the first request of a key. */
  window: Duration
}

/** Limits of the password login. */
export interface LoginRateLimitRule extends RateLimitRule {
  /**
   * Failed logins per email and client address within `window`, and per device cookie (0: no
   * limit per address, and no device cookies).
   */
  perEmailAndIp: number
  /**
   * Lifetime (seconds or a duration string) of the device cookie (`__Host-svc-device` when Secure, else `svc-device`)
   * set by the token exchange of a completed password login: it names the account by an HMAC
   * under the server secret, never in clear. A login from a browser that holds a valid one for the
   * email counts its failures per device cookie (`perEmailAndIp`) instead of `perEmail`, so
   * strangers elsewhere cannot lock that browser out. 0: no device cookies (every login counts
   * under `perEmail`).
   * @default 31536000 (365 days)
   */
  deviceCookieMaxAge: Duration
}

/** Failed verifications per email and action. */
export interface VerifyFailureBudget {
  /** Failures allowed within `window` (0: no limit). */
  perEmail: number
  /** Length of the window (seconds or a duration string). */
  window: Duration
}

/** Global budget of code-only verification misses per action. */
export interface CodeOnlyBudget {
  /** Misses allowed per action within `window` (0: code-only verification is off). */
  misses: number
  /** Length of the window (seconds or a duration string). */
  window: Duration
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
   * A request header that carries the client's address, set by the hosting platform in front of
   * the server, which replaces any value a client sends: `cf-connecting-ip` (Cloudflare),
   * `x-real-ip` (Vercel), `x-nf-client-connection-ip` (Netlify). Serverless functions and Workers
   * have no socket address of the client, so without it every client would share one address
   * (one rate-limit bucket for everyone). Only a valid IP address is taken from it; otherwise the
   * address comes from the socket and `trustedProxies` as without it (the log says so once).
   * Empty: a build for a Cloudflare, Vercel or Netlify preset uses that platform's header, any
   * other build none. `false`: no header, on every preset (a `cloudflare-*` build served by
   * workerd on your own servers, behind a proxy that does not set `cf-connecting-ip`). Set it only
   * behind a platform that sets the header: elsewhere clients would choose their address. Headers
   * proxies append to (`x-forwarded-for`, `forwarded`) are refused: use `trustedProxies` for them.
   * Env: `NUXT_SVC_AUTH_RATE_LIMIT_CLIENT_ADDRESS_HEADER` (`false` for none).
   * @default ''
   */
  clientAddressHeader: string | false
  /**
   * POST /auth/password/register.
   * @default { perIp: 10, perEmail: 5, window: 3600 }
   */
  register: RateLimitRule
  /**
   * POST /auth/password/login. `perIp` counts every request of an address; `perEmailAndIp` and
   * `perEmail` count failed logins only (wrong password or unknown account). `perEmail` bounds
   * the failures of one email from all clients without a device cookie for it; a browser that
   * has completed a login as that user counts under its device cookie instead, so strangers'
   * failures never lock it out.
   * @default { perIp: 30, perEmailAndIp: 5, perEmail: 100, window: 900, deviceCookieMaxAge: 31536000 }
   */
  login: LoginRateLimitRule
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
   * Verification by the code alone (`?code=` without `email` or `flow`): every such lookup that
   * finds no code draws on one budget per action, shared by all clients; with more than 10 codes
   * of the action outstanding the budget shrinks in proportion. Once it is spent, code-only
   * verification answers 429 until the window ends; links with `flow` or `email` keep working.
   * With the defaults, an attacker with unlimited addresses hits any outstanding code in a day
   * with a chance below 0.6 %, however many codes are outstanding. `misses: 0` refuses code-only
   * verification (400).
   * @default { misses: 25, window: 3600 }
   */
  codeOnlyVerify: CodeOnlyBudget
  /**
   * Failed verifications of one email's codes of one action, across all its codes and links:
   * beyond `perEmail` in `window`, verification for that email and action answers 429 (new codes
   * reset the per-code attempt count, not this one).
   * @default { perEmail: 10, window: 86400 }
   */
  verifyFailures: VerifyFailureBudget
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
  /**
   * POST <authPath>/passkey/login/options and login/verify: every request per client address,
   * and per email the options requests that give it as a hint.
   * @default { perIp: 60, perEmail: 10, window: 900 }
   */
  passkey: RateLimitRule
}

/** Names of the rules (the endpoints they apply to). */
export type RateLimitRuleName = Exclude<keyof RateLimitOptions, 'enabled' | 'trustedProxies' | 'clientAddressHeader' | 'codeOnlyVerify' | 'verifyFailures'>
