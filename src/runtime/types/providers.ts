/** Provider options (`svcAuth.providers`); secrets live in the private runtime config only. */

import type { PasswordProviderOptions } from '../password/password-types'
import type { PasskeyProviderOptions } from '../passkey/passkey-types'
import type { MagicLinkProviderOptions } from '../magic-link/magic-link-types'

/** How the client authenticates at the token endpoint. */
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post'

/** Options common to every OAuth provider. */
export interface OAuthProviderOptions {
  /** OAuth client id. Required. */
  clientId: string
  /** OAuth client secret (private runtime config only). Required. */
  clientSecret: string
  /**
   * Scopes; defaults depend on the provider (`openid email profile`, GitHub `user:email read:user`).
   * @default provider default
   */
  scopes?: string[]
  /**
   * Extra query parameters of the authorization request (e.g. `{ prompt: 'select_account' }`).
   * They never replace `state`, `nonce`, `code_challenge`, `redirect_uri`, `client_id` or `response_type`.
   * @default {}
   */
  authorizationParams?: Record<string, string>
  /**
   * OpenID Connect issuer: endpoints not given below are discovered from it and the id_token `iss`
   * must equal it (replaces `domain`, `baseUrl`, `realm`, `tenant`).
   * @default the provider's own issuer
   */
  issuer?: string
  /** Authorization endpoint (overrides the built-in or discovered one). @default provider default */
  authorizationUrl?: string
  /** Token endpoint (overrides the built-in or discovered one). @default provider default */
  tokenUrl?: string
  /** UserInfo endpoint (overrides the built-in or discovered one). @default provider default */
  userInfoUrl?: string
  /** JSON Web Key Set of the id_token signatures (overrides the built-in or discovered one). @default provider default */
  jwksUrl?: string
  /**
   * End-session endpoint of OpenID Connect RP-Initiated Logout (`logout({ provider: true })`), for a provider
   * whose discovery document does not give one. @default provider default (discovered, or the preset's)
   */
  endSessionUrl?: string
  /**
   * Where the provider may send the browser after a logout there (`post_logout_redirect_uri`): absolute URLs,
   * each registered at the provider. The first is the default; `logout({ provider: true, postLogoutRedirectUri })`
   * may pick another, exactly as listed. Empty: `publicUrl` + `redirect.logout` when `publicUrl` is set, else none.
   * @default []
   */
  postLogoutRedirectUrls?: string[]
  /**
   * Absolute redirect URI registered at the provider (behind a proxy that rewrites the host).
   * @default ''
   */
  redirectUrl?: string
  /**
   * Client authentication at the token endpoint.
   * @default provider default (`client_secret_post` for GitHub, Auth0 and Discord, else `client_secret_basic`)
   */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod
  /**
   * Keep the provider's tokens (access, refresh, expiry, scope) server-side at each login, sealed, for
   * `getProviderToken(event, name)`. `true`: dropped when the user's last session ends (logout,
   * revocation); `'offline'`: kept after it, for background jobs (`getProviderToken({ userId }, name)`).
   * @default false
   */
  keepTokens?: boolean | 'offline'
}

/** Google (OpenID Connect): the common options only. */
export type GoogleProviderOptions = OAuthProviderOptions

/** GitHub (OAuth 2.0; the primary verified email is fetched when the profile hides it). */
export interface GitHubProviderOptions extends OAuthProviderOptions {
  /**
   * Base URL of the REST API (`/user`, `/user/emails`); GitHub Enterprise Server uses `https://host/api/v3`.
   * @default 'https://api.github.com'
   */
  apiUrl?: string
}

/** Auth0 (OpenID Connect on a tenant domain). */
export interface Auth0ProviderOptions extends OAuthProviderOptions {
  /** Tenant domain such as `my-tenant.eu.auth0.com`. Required unless `issuer` is set. @default '' */
  domain?: string
  /** API identifier sent as the `audience` authorization parameter. @default '' */
  audience?: string
}

/** Microsoft Entra ID (OpenID Connect, v2.0 endpoints). */
export interface MicrosoftProviderOptions extends OAuthProviderOptions {
  /**
   * Tenant id or domain, or `common`, `organizations`, `consumers` (multi-tenant: the id_token
   * issuer must then match the token's own `tid`).
   * @default 'common'
   */
  tenant?: string
}

/** Keycloak (OpenID Connect; one realm of a Keycloak server). */
export interface KeycloakProviderOptions extends OAuthProviderOptions {
  /** URL of the Keycloak server (`https://sso.example.com`). Required unless `issuer` is set. @default '' */
  baseUrl?: string
  /** Realm name. Required unless `issuer` is set. @default '' */
  realm?: string
}

/** GitLab (OpenID Connect; gitlab.com or a self-managed instance). */
export interface GitLabProviderOptions extends OAuthProviderOptions {
  /** URL of the GitLab instance. @default 'https://gitlab.com' */
  baseUrl?: string
}

/** Discord (OAuth 2.0 without OpenID Connect; the user from `GET /api/users/@me`). */
export interface DiscordProviderOptions extends OAuthProviderOptions {
  /** Base URL of Discord's web and API endpoints. @default 'https://discord.com' */
  baseUrl?: string
}

/** One or more profile fields, tried in order; `a.b` reads a nested field. */
export type ProfileField = string | string[]

/** Which profile field(s) give each user field; other profile fields are kept as they are. */
export interface ProfileMapping {
  /** The user id; a number becomes a string. @default ['sub', 'id'] */
  sub?: ProfileField
  /** @default 'email' */
  email?: ProfileField
  /** A field that is `true` (or `'true'`) when the email is verified. @default 'email_verified' */
  emailVerified?: ProfileField
  /** @default 'name', else given + family name, else ['preferred_username', 'username', 'login'] */
  name?: ProfileField
  /** @default ['picture', 'avatar_url'] */
  picture?: ProfileField
}

/** A provider of your own: `issuer`, or explicit `authorizationUrl`, `tokenUrl` and `userInfoUrl`. */
export interface CustomProviderOptions extends OAuthProviderOptions {
  /** Unique name; the login URL is `<loginPath>/<name>`. Letters, digits, `-` and `_`. Required. */
  name: string
  /**
   * Which profile fields give the user's id, email, name and picture.
   * @default OpenID Connect claims, `id` as the id when there is no `sub`
   */
  profileMapping?: ProfileMapping
}

/** A custom provider in the record form `custom: { <name>: { … } }`: the key is its name. */
export interface NamedCustomProviderOptions extends Omit<CustomProviderOptions, 'name'> {
  /** The key already names the provider; when given, it must equal the key. @default the key */
  name?: string
}

/** A user of the mock provider. Keys beyond sub, email, name and picture become custom claims. */
export interface MockUser {
  sub: string
  email: string
  name: string
  picture?: string
  [claim: string]: unknown
}

/** The development mock provider: a local OAuth server at `/mock/*` with fixed users. */
export interface MockProviderOptions {
  /** Any string; the mock token endpoint checks it. @default 'mock-client' */
  clientId?: string
  /** Any string; the mock token endpoint checks it. @default 'mock-secret' */
  clientSecret?: string
  /** The users to log in as. Required. */
  mockUsers: MockUser[]
  /** Index of the user chosen when `/auth/mock` has no `user` query. @default 0 */
  defaultUser?: number
  /**
   * Serve the mock provider in production too (anyone can log in as any mock user; a warning is logged).
   * @default false
   */
  enableInProduction?: boolean
}

/** The built-in OAuth providers and their option types (the preset table must have exactly these keys). */
export interface BuiltInOAuthProviders {
  google: GoogleProviderOptions
  github: GitHubProviderOptions
  auth0: Auth0ProviderOptions
  microsoft: MicrosoftProviderOptions
  keycloak: KeycloakProviderOptions
  gitlab: GitLabProviderOptions
  discord: DiscordProviderOptions
}

/** Names of the built-in OAuth providers. */
export type BuiltInOAuthProvider = keyof BuiltInOAuthProviders

/** The options of a built-in provider, e.g. `OAuthProviderOptionsOf<'keycloak'>`. */
export type OAuthProviderOptionsOf<K extends BuiltInOAuthProvider> = BuiltInOAuthProviders[K]

/** One optional key per built-in provider. */
export type BuiltInProvidersOptions = { [K in BuiltInOAuthProvider]?: OAuthProviderOptionsOf<K> }

/** Login providers keyed by name. */
export interface ProvidersOptions extends BuiltInProvidersOptions {
  /** Development mock provider. */
  mock?: MockProviderOptions
  /**
   * Providers of your own: keyed by name (`{ acme: { … } }`), or an array of entries with a unique `name`.
   * @default {}
   */
  custom?: Record<string, NamedCustomProviderOptions> | CustomProviderOptions[]
  /** Email and password login with emailed 6-digit codes (enabled when set, even to `{}`). */
  password?: PasswordProviderOptions
  /** Passkeys (WebAuthn), enabled when set, even to `{}`; the host stores credentials. */
  passkey?: PasskeyProviderOptions
  /** Login links by email (enabled when set, even to `{}`), through the `password` handlers `findUser` and `sendVerificationCode`. */
  magicLink?: MagicLinkProviderOptions
}
