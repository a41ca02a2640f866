/**
 * Provider options (`svcAuth.providers`). Client secrets live in the private runtime config only
 * and can be given at runtime, e.g. `NUXT_SVC_AUTH_PROVIDERS_GOOGLE_CLIENT_SECRET`.
 */

import type { PasswordProviderOptions } from './password'

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
   * OpenID Connect issuer. When set, the endpoints not given explicitly below are discovered from
   * `<issuer>/.well-known/openid-configuration` (replacing the built-in ones), and the id_token `iss`
   * must equal it.
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
   * Absolute redirect URI registered at the provider, for apps behind a proxy that rewrites the
   * host. By default it is the login route on the request's own origin (`https://app/auth/google`).
   * @default ''
   */
  redirectUrl?: string
  /**
   * Client authentication at the token endpoint.
   * @default provider default (`client_secret_post` for GitHub and Auth0, else `client_secret_basic`)
   */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod
}

/** Google (OpenID Connect). */
export interface GoogleProviderOptions extends OAuthProviderOptions {}

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
  /** Tenant domain such as `my-tenant.eu.auth0.com`. Required. */
  domain: string
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

/** A provider of your own: `issuer` (discovery) or explicit `authorizationUrl`, `tokenUrl`, `userInfoUrl`. */
export interface CustomProviderOptions extends OAuthProviderOptions {
  /** Unique name; the login URL is `<loginPath>/<name>`. Letters, digits, `-` and `_`. Required. */
  name: string
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
   * Serve the mock provider in production builds too. Not recommended: anyone can log in as any
   * mock user. A loud warning is logged when the server starts.
   * @default false
   */
  enableInProduction?: boolean
}

/** Login providers keyed by name. */
export interface ProvidersOptions {
  /** Google. */
  google?: GoogleProviderOptions
  /** GitHub. */
  github?: GitHubProviderOptions
  /** Auth0. */
  auth0?: Auth0ProviderOptions
  /** Microsoft Entra ID. */
  microsoft?: MicrosoftProviderOptions
  /** Development mock provider. */
  mock?: MockProviderOptions
  /** Providers of your own, each with a unique `name`. @default [] */
  custom?: CustomProviderOptions[]
  /** Email and password login with emailed 6-digit codes (enabled when set, even to `{}`). */
  password?: PasswordProviderOptions
}

/** Names of the built-in OAuth providers. */
export type BuiltInOAuthProvider = 'google' | 'github' | 'auth0' | 'microsoft'
