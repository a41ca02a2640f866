/**
 * Module options (`svcAuth` in nuxt.config), each overridable at runtime by `NUXT_SVC_AUTH_*`
 * environment variables. Only `PublicAuthConfig` reaches the browser.
 */

import type { Duration } from './time-span'
import type { ProvidersOptions } from './providers'
import type { RateLimitOptions } from './rate-limit-options'
import type { TokenRefreshOptions } from './refresh'
import type { TwoFactorOptions } from '../two-factor/two-factor-types'
import type { OrganizationsOptions, RoleTable } from '../organizations/organization-types'
import type { AuditOptions } from '../audit/audit-types'
import type { NativeOptions } from '../native/native-types'
import type { IdentitiesOptions } from '../identities/identity-types'
import type { I18nOptions } from '../i18n/i18n-types'

export type { RedisNode, RefreshCookieOptions, RefreshEncryptionOptions, RefreshStorageOptions, SameSite, StorageDriverName, TokenRefreshOptions } from './refresh'
export type { TwoFactorAlgorithm, TwoFactorOptions } from '../two-factor/two-factor-types'
export type { OrganizationsOptions, RoleTable } from '../organizations/organization-types'
export type { AuditOptions } from '../audit/audit-types'
export type { NativeOptions } from '../native/native-types'
export type { IdentitiesOptions } from '../identities/identity-types'
export type { BuiltInLocale, I18nOptions } from '../i18n/i18n-types'

export type { Duration, Parsed } from './time-span'

export type TokenAlgorithm = 'HS256' | 'RS256'
export type LogLevel = 'silent' | 'error' | 'warn' | 'info' | 'debug'

export interface TokenOptions {
  /** Server secret (32 bytes or more): signs HS256 tokens and keys the HMAC of stored tokens and codes. Required. @default '' */
  secret: string
  /** Previous secrets, newest first: they still verify and find what they signed until it expires (docs/deploying.md). @default [] */
  previousSecrets: string[]
  /** Access token lifetime. @default '1h' */
  expiresIn: Duration
  /** Signing algorithm; RS256 needs `privateKey`. @default 'HS256' */
  algorithm: TokenAlgorithm
  /** `iss` claim, checked on verification. @default 'svc' */
  issuer: string
  /** `aud` claim, checked on verification. @default '' */
  audience: string
  /** RS256 only: PKCS#8 PEM private key; its public key is served at `jwksPath`. @default '' */
  privateKey: string
  /** RS256 only: `kid` of `privateKey` (empty: its RFC 7638 thumbprint). @default 'svc-auth' */
  keyId: string
  /** RS256 only: keys that verify but never sign (the previous or the next key), all in the JWKS. @default [] */
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
  /** Authorization code lifetime. @default 60 */
  expiresIn: Duration
  /** HttpOnly cookie binding a code to its browser (`__Host-` prefixed when secure). @default 'svc-code' */
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
  /** The caller's sessions: list, `DELETE <path>/:id`, `POST <path>/revoke-others`. @default '/auth/sessions' */
  sessionsPath: string
  /** Second-factor page (an app page at this path replaces the module's). @default '/auth/second-factor' */
  secondFactorPath: string
  /** Page of the emailed login links (`providers.magicLink`; an app page at this path replaces the module's). @default '/auth/magic-link/open' */
  magicLinkPath: string
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
  /** Lifetime of impersonated tokens. @default 900 */
  tokenExpiration: Duration
  /** Claim of the requester used to look them up again when impersonation ends. @default 'sub' */
  originalUserLookupClaim: string
}

export interface SessionOptions {
  /** Refuse access tokens of revoked sessions (401 `session_revoked`; docs/sessions.md). @default true */
  revokeAccessTokens: boolean
  /** How recent a login must be to change how the user logs in (else 403 `reauthentication_required`). @default '15m' */
  recentLogin: Duration
}

export interface SecurityOptions {
  /** Largest request body in bytes of the module's POST endpoints (else 413). @default 16384 */
  maxBodySize: number
  /** Origins besides the app's own that may call the cookie and password endpoints (else 403 `cross_origin_request`). @default [] */
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
  /** Organizations, teams, roles and invitations (off until set, even to `{}`). */
  organizations?: OrganizationsOptions
  /** The security audit log: chained events, `GET /auth/audit`, users' own activity (off until set, even to `{}`). */
  audit?: AuditOptions
  /** Native and other non-browser clients: refresh tokens in the body, logins per RFC 8252 (off until set). */
  native?: NativeOptions
  /** Several providers logging into one account: links, `identities` handlers (off until set, even to `{}`). */
  identities?: IdentitiesOptions
  /** The locales of the module's answers, pages and emails besides English (docs/i18n.md). */
  i18n?: I18nOptions
  /** The app's public URL: its origin and the base of absolute URLs instead of the `Host` header. @default '' */
  publicUrl: string
  /** Per-request SSR access token and the server side of the fetch helper. @default true when `ssr` is on */
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
    /** Readable cookie `<cookieName>-present` beside the refresh cookie; without it no refresh at start-up. */
    presenceCookie?: string
  }
  enableSSR: boolean
  /** Present when `organizations` is set: what the invitation page needs. */
  organizations?: PublicOrganizationsConfig
  /** Present when `audit.adminPage` is set: what the admin page needs. */
  auditAdmin?: { impersonation: boolean }
}

/** The browser's part of `organizations` (`runtimeConfig.public.svcAuth.organizations`). */
export interface PublicOrganizationsConfig {
  /** The invitation page's path. */
  invitationPath: string
  /** Where the invitation page goes once the invitation is accepted. */
  redirectAfterAccept: string
  /** The role table, for `useAuth().can()` and the page guard of permissions and roles. */
  roles: RoleTable
}
