/**
 * Module options of nuxt-svc-auth (`svcAuth` key in nuxt.config).
 *
 * Every option can be overridden at runtime through `NUXT_SVC_AUTH_*` environment variables
 * (for example `NUXT_SVC_AUTH_TOKEN_SECRET`), because the options are copied into the private
 * runtime config. Only the non-secret part listed in `PublicAuthConfig` reaches the browser.
 */

import type { Duration } from './duration'
import type { ProvidersOptions } from './providers'
import type { RateLimitOptions } from './rate-limit-options'
import type { TokenRefreshOptions } from './refresh'
import type { TwoFactorOptions } from '../two-factor/two-factor-types'

export type { RedisNode, RefreshCookieOptions, RefreshEncryptionOptions, RefreshStorageOptions, TokenRefreshOptions } from './refresh'
export type { TwoFactorAlgorithm, TwoFactorOptions } from '../two-factor/two-factor-types'
export type { Duration, Parsed } from './duration'

export type TokenAlgorithm = 'HS256' | 'RS256'
export type StorageDriverName = 'fs' | 'redis' | 'memory' | 'upstash'
export type LogLevel = 'silent' | 'error' | 'warn' | 'info' | 'debug'
export type SameSite = 'lax' | 'strict' | 'none'

export interface TokenOptions {
  /**
   * Server secret. Signs access tokens with HS256 (at least 32 bytes) and keys the HMAC that
   * hides tokens and codes in storage (also with RS256). Required.
   * @default ''
   */
  secret: string
  /**
   * Previous server secrets, newest first: they still verify HS256 access tokens and still find
   * the records stored under their HMAC keys until those expire, while everything new is signed
   * and stored with `secret`. Remove one once the refresh lifetime has passed since it was
   * replaced (see the key rotation runbook in docs/deploying.md).
   * @default []
   */
  previousSecrets: string[]
  /**
   * Access token lifetime (seconds or a duration string).
   * @default '1h'
   */
  expiresIn: Duration
  /**
   * Signing algorithm. RS256 needs `privateKey`.
   * @default 'HS256'
   */
  algorithm: TokenAlgorithm
  /**
   * `iss` claim, checked on verification.
   * @default 'svc'
   */
  issuer: string
  /**
   * `aud` claim, checked on verification.
   * @default ''
   */
  audience: string
  /**
   * RS256 only: PKCS#8 PEM private key (`-----BEGIN PRIVATE KEY-----`). The public key is derived
   * from it and served as a JWKS at `/.well-known/jwks.json`.
   * @default ''
   */
  privateKey: string
  /**
   * RS256 only: `kid` of `privateKey`, written into tokens and the JWKS. A token's `kid` selects
   * among the configured keys only (this one and `previousKeys`), never a key from elsewhere.
   * Empty: the RFC 7638 thumbprint of the public key.
   * @default 'svc-auth'
   */
  keyId: string
  /**
   * RS256 only: keys that verify tokens but never sign, each `{ keyId?, key }` with `key` a PEM
   * (PKCS#8 private or SPKI public key; only the public half is used) and `keyId` its `kid`
   * (default: the RFC 7638 thumbprint). All are published in the JWKS. Holds the previous key
   * after a rotation, and may hold the next one before it starts signing, so that verifiers that
   * cache the JWKS know it in time (see the key rotation runbook in docs/deploying.md).
   * @default []
   */
  previousKeys: RsaVerificationKey[]
}

/** A key of `token.previousKeys`. */
export interface RsaVerificationKey {
  /** `kid` of the key; default: its RFC 7638 thumbprint. */
  keyId?: string
  /** PEM: PKCS#8 private key or SPKI public key (`-----BEGIN PUBLIC KEY-----`). */
  key: string
}

export interface AuthCodeOptions {
  /** Authorization code lifetime (seconds or a duration string). @default 60 */
  expiresIn: Duration
  /**
   * Name of the short-lived HttpOnly cookie that binds an authorization code to the browser it
   * was issued to (POST /auth/token refuses the code without it). With `tokenRefresh.cookie.secure`
   * the name gets the `__Host-` prefix, so a sibling subdomain cannot plant one.
   * @default 'svc-code'
   */
  cookieName: string
}

export interface RedirectOptions {
  /** Relative path after logout. @default '/' */
  logout: string
  /** Relative path after a successful login. @default '/' */
  success: string
  /** Relative path for login and refresh errors. @default '/' */
  error: string
}

export interface ClientMiddlewareOptions {
  /** @default false */
  enabled: boolean
  /** Apply the protecting middleware to every page. @default false */
  global: boolean
  /** Where unauthenticated users go from protected pages (required when enabled). @default '' */
  redirectTo: string
  /** Where authenticated users go from logged-out-only pages (required when enabled). @default '' */
  loggedOutRedirectTo: string
  /** Route globs that never need authentication. @default [] */
  publicRoutes: string[]
}

export interface EndpointOptions {
  /** @default '/auth' */
  authPath: string
  /** Login URL is loginPath + '/' + provider. @default '/auth' */
  loginPath: string
  /** @default '/auth/callback' */
  callbackPath: string
  /** @default '/auth/logout' */
  logoutPath: string
  /** @default '/auth/refresh' */
  refreshPath: string
  /** @default '/api/user/me' */
  userInfoPath: string
  /** Authorization code exchange. @default '/auth/token' */
  tokenPath: string
  /** Public keys for RS256 tokens. @default '/.well-known/jwks.json' */
  jwksPath: string
  /** Start impersonating (when impersonation is enabled). @default '/auth/impersonate' */
  impersonatePath: string
  /** End impersonating. @default '/auth/unimpersonate' */
  unimpersonatePath: string
  /**
   * The caller's sessions: `GET` lists them, `DELETE <path>/:id` ends one,
   * `POST <path>/revoke-others` ends all but the caller's.
   * @default '/auth/sessions'
   */
  sessionsPath: string
  /**
   * Page of the second factor (when `twoFactor.enabled`): logins that need one stop here with
   * `?flow=<id>`. The module registers a minimal page; an app page at the same path replaces it.
   * @default '/auth/second-factor'
   */
  secondFactorPath: string
}

export interface LoggingOptions {
  /** @default 'info' */
  level: LogLevel
  /** Log security events (failed exchanges, token reuse, revocations). @default false */
  security: boolean
}

export interface ImpersonationOptions {
  /** @default false */
  enabled: boolean
  /** Lifetime of impersonated tokens (seconds or a duration string). @default 900 */
  tokenExpiration: Duration
  /** Claim of the requester used to look them up again when impersonation ends. @default 'sub' */
  originalUserLookupClaim: string
}

export interface SessionOptions {
  /**
   * Access tokens die with their session: once a session is revoked (logout, refresh token
   * reuse, password reset or change, the end of an impersonation, the session endpoints), its
   * access tokens are refused (401 `session_revoked`) by route protection, `requireAuthUser` and
   * the user info endpoint: at once on the process that revoked it, and on every other process
   * that shares the store within milliseconds on Redis (pub/sub) or about a second on fs (each
   * process reloads the revoked sessions every second). The check is a lookup in an in-process
   * set (no store access per request). Off: access tokens are purely stateless and stay valid
   * until they expire. See docs/sessions.md for the guarantee and its limits.
   * @default true
   */
  revokeAccessTokens: boolean
  /**
   * How recent a login must be to change how a user logs in: registering (options and verify)
   * or deleting a passkey, and enrolling (start and confirm), new recovery codes or turning off a
   * second factor, need the access token of a session that logged in at most this long ago (the
   * session's start, not its last refresh; a token without a session: its issue time). Older
   * sessions get 403 `reauthentication_required`, and the user logs in again. A stolen access
   * token of an older session then cannot plant the thief's own passkey or authenticator, nor
   * remove the user's.
   * Seconds or a duration string.
   * @default '15m'
   */
  recentLogin: Duration
}

export interface SecurityOptions {
  /**
   * Largest request body, in bytes, that a POST endpoint of the module accepts (413
   * `payload_too_large` otherwise, before the rest of the body is read).
   * @default 16384
   */
  maxBodySize: number
  /**
   * Origins (`https://admin.example.com`) besides the app's own that may call the
   * cookie-authenticated endpoints (token, refresh, logout, unimpersonate) and the password
   * endpoints from a browser. A request whose `Origin` (or `Referer`) is another origin, or that a
   * browser marks `Sec-Fetch-Site: cross-site` or `same-site` without an allowed origin, is refused
   * with 403 `cross_origin_request`.
   * @default []
   */
  allowedOrigins: string[]
}

export interface ModuleOptions {
  /** Login providers (OAuth, mock, password), keyed by name. @default {} */
  providers: ProvidersOptions
  token: TokenOptions
  tokenRefresh: TokenRefreshOptions
  authCode: AuthCodeOptions
  redirect: RedirectOptions
  clientMiddleware: ClientMiddlewareOptions
  endpoints: EndpointOptions
  logging: LoggingOptions
  impersonation: ImpersonationOptions
  /** Rate limits of the password endpoints (429 with `Retry-After`). */
  rateLimit: RateLimitOptions
  /** Request size limit and allowed origins of the module's endpoints. */
  security: SecurityOptions
  /** Sessions: revocation of access tokens. */
  sessions: SessionOptions
  /** The TOTP second factor with recovery codes (off by default). */
  twoFactor: TwoFactorOptions
  /**
   * The app's public URL (`https://app.example.com`). When set, it is the app's own origin for
   * the origin check, the base of absolute URLs the module builds (OAuth `redirect_uri`, the mock
   * provider, verify links given to `sendVerificationCode`), and the request's `Host` header is
   * never used for them. Recommended in production behind a proxy.
   * @default ''
   */
  publicUrl: string
  /**
   * Per-request SSR access token and the server side of the fetch helper.
   * @default true when `ssr` is on
   */
  enableSSR: boolean
}

/** Deep-partial options as written in nuxt.config. */
export type ModuleOptionsInput = {
  [K in keyof ModuleOptions]?: ModuleOptions[K] extends Array<unknown>
    ? ModuleOptions[K]
    : ModuleOptions[K] extends object
      ? { [P in keyof ModuleOptions[K]]?: ModuleOptions[K][P] extends Array<unknown> ? ModuleOptions[K][P] : ModuleOptions[K][P] extends object ? Partial<ModuleOptions[K][P]> : ModuleOptions[K][P] }
      : ModuleOptions[K]
}

/** The part of the options the browser receives (`runtimeConfig.public.svcAuth`). No secrets. */
export interface PublicAuthConfig {
  /** Names of the configured login providers (no credentials). */
  providers: string[]
  endpoints: EndpointOptions
  redirect: RedirectOptions
  clientMiddleware: ClientMiddlewareOptions
  tokenRefresh: Pick<TokenRefreshOptions, 'enabled' | 'automaticRefresh'> & {
    /**
     * Name of the session presence flag (`<tokenRefresh.cookie.cookieName>-present`), a readable
     * cookie beside the refresh cookie: without it the browser makes no refresh at start-up.
     * Absent: every start refreshes (as before the flag existed).
     */
    presenceCookie?: string
  }
  enableSSR: boolean
}
