import type * as oauth from 'oauth4webapi'
import type { AuthUser, ProviderTokens } from '../../types/auth'
import type { OAuthProviderOptions, TokenEndpointAuthMethod } from '../../types/providers'

/** Fetch used for every request to a provider. */
export type ProviderFetch = (url: string, init: RequestInit) => Promise<Response>

/** Endpoints of an authorization server, named as in its discovery document. */
export interface ProviderEndpoints {
  issuer?: string
  authorization_endpoint?: string
  token_endpoint?: string
  userinfo_endpoint?: string
  jwks_uri?: string
  id_token_signing_alg_values_supported?: string[]
  /** OpenID Connect RP-Initiated Logout: where the browser ends its session at the provider. */
  end_session_endpoint?: string
}

/** What reading the user after the code exchange has at hand. */
export interface ProfileRequest {
  provider: ResolvedProvider
  /** The provider's endpoints (the only URLs the access token may be sent to, with the preset's API base). */
  as: oauth.AuthorizationServer
  client: oauth.Client
  tokens: ProviderTokens
  idClaims?: oauth.IDToken
  fetchFn: ProviderFetch
}

export interface FetchedUser {
  user: AuthUser
  /** Claims the provider itself contributes (the mock user's extra keys). */
  providerClaims?: Record<string, unknown>
}

/** Option keys a preset adds to the common ones (`domain`, `tenant`, `baseUrl`, …). */
export type OwnOptionKeys<O> = Exclude<keyof O, keyof OAuthProviderOptions>

/** A built-in provider, as data; its key in the preset table names its login route, option and env variables. */
export interface OAuthPreset<O extends OAuthProviderOptions> {
  /** Name in `defineOAuth<label>EventHandler` and in messages, e.g. `GitHub`. */
  label: string
  scopes: string[]
  tokenEndpointAuthMethod: TokenEndpointAuthMethod
  /** Speaks OpenID Connect (nonce, required id_token) when `openid` is among the scopes. */
  oidc: boolean
  /** Every own option key with its default, written into the runtime config so each can come from the environment. */
  defaults: { [K in OwnOptionKeys<O>]-?: NonNullable<O[K]> }
  /** Own keys that must be set unless `issuer` is (they locate the provider's server). */
  requires?: Array<OwnOptionKeys<O>>
  /** Further checks of the options: one message per mistake, starting with the key (`tenant must be …`). */
  check?(options: O): string[]
  /** The built-in endpoints (used when no `issuer` is given). */
  endpoints(options: O): ProviderEndpoints
  /** Authorization parameters derived from the options (the host's `authorizationParams` go over them). */
  authorizationParams?(options: O): Record<string, string>
  /** The id_token issuer is a template with `{tenantid}`, filled with the token's `tid` (Entra ID multi-tenant). */
  tenantIssuer?(options: O): boolean
  /** Reads the user; default: userinfo (with the id_token claims over it), mapped by `mapProfile`. */
  fetchProfile?(request: ProfileRequest, options: O): Promise<FetchedUser>
  /** Turns the profile into the user; default: OpenID Connect claims. */
  mapProfile?(profile: Record<string, unknown>, options: O): AuthUser
}

/** One provider, ready for the login flow. */
export interface ResolvedProvider {
  name: string
  type: string
  clientId: string
  clientSecret: string
  scopes: string[]
  authorizationParams: Record<string, string>
  tokenEndpointAuthMethod: TokenEndpointAuthMethod
  /** Issuer whose discovery document supplies the endpoints not given explicitly. */
  discoveryIssuer?: string
  endpoints: ProviderEndpoints
  /** OpenID Connect: a nonce is sent and a valid id_token is required. */
  openid: boolean
  /** The id_token issuer is `endpoints.issuer` with `{tenantid}` replaced by the token's `tid`. */
  multiTenantIssuer: boolean
  redirectUrl?: string
  /** Served by this app (the mock): without a public URL, relative browser URLs and in-process endpoint calls. */
  local: boolean
  /** Login-route query parameters passed on to the authorization request (route name → provider name). */
  forwardedQuery: Record<string, string>
  /** Where the provider may send the browser after a logout there (absolute URLs, registered at the provider). */
  postLogoutRedirectUrls: string[]
  fetchProfile(request: ProfileRequest): Promise<FetchedUser>
}
