import type { AuthUser } from '../../../types/auth'
import type {
  Auth0ProviderOptions,
  BuiltInOAuthProvider,
  CustomProviderOptions,
  GitHubProviderOptions,
  MicrosoftProviderOptions,
  MockProviderOptions,
  OAuthProviderOptions,
  ProvidersOptions,
  TokenEndpointAuthMethod,
} from '../../../types/providers'

/** Endpoints of an authorization server, named as in its discovery document. */
export interface ProviderEndpoints {
  issuer?: string
  authorization_endpoint?: string
  token_endpoint?: string
  userinfo_endpoint?: string
  jwks_uri?: string
  id_token_signing_alg_values_supported?: string[]
}

/** How the provider's profile becomes the login user. */
export type ProfileKind = 'oidc' | 'github' | 'mock'

export type ProviderType = BuiltInOAuthProvider | 'custom' | 'mock'

/** One provider, ready for the login flow. */
export interface ResolvedProvider {
  name: string
  type: ProviderType
  clientId: string
  clientSecret: string
  scopes: string[]
  authorizationParams: Record<string, string>
  tokenEndpointAuthMethod: TokenEndpointAuthMethod
  /** Issuer whose discovery document supplies the endpoints not given explicitly. */
  discoveryIssuer?: string
  /** Built-in or explicit endpoints (explicit ones win over discovered ones). Relative ones are on the app's origin. */
  endpoints: ProviderEndpoints
  /** OpenID Connect: a nonce is sent and a valid id_token is required. */
  openid: boolean
  /** Entra ID multi-tenant: the id_token issuer is `https://login.microsoftonline.com/<tid>/v2.0` of its own `tid`. */
  multiTenantIssuer: boolean
  profile: ProfileKind
  /** GitHub REST API base. */
  apiUrl?: string
  /** Absolute redirect URI override. */
  redirectUrl?: string
}

/** A built-in provider, as data. */
interface ProviderPreset<O> {
  scopes: string[]
  tokenEndpointAuthMethod: TokenEndpointAuthMethod
  profile: ProfileKind
  /** Speaks OpenID Connect (id_token) when `openid` is among the scopes. */
  oidc: boolean
  endpoints(options: O): ProviderEndpoints
  authorizationParams?(options: O): Record<string, string>
}

const MS_LOGIN = 'https://login.microsoftonline.com'
const MULTI_TENANTS = new Set(['common', 'organizations', 'consumers'])

export const PRESETS: { [K in BuiltInOAuthProvider]: ProviderPreset<NonNullable<ProvidersOptions[K]>> } = {
  google: {
    scopes: ['openid', 'email', 'profile'],
    tokenEndpointAuthMethod: 'client_secret_basic',
    profile: 'oidc',
    oidc: true,
    endpoints: () => ({
      issuer: 'https://accounts.google.com',
      authorization_endpoint: 'https://accounts.google.com/o/oauth2/v2/auth',
      token_endpoint: 'https://oauth2.googleapis.com/token',
      userinfo_endpoint: 'https://openidconnect.googleapis.com/v1/userinfo',
      jwks_uri: 'https://www.googleapis.com/oauth2/v3/certs',
      id_token_signing_alg_values_supported: ['RS256'],
    }),
  },
  github: {
    scopes: ['user:email', 'read:user'],
    tokenEndpointAuthMethod: 'client_secret_post',
    profile: 'github',
    oidc: false,
    endpoints: () => ({
      issuer: 'https://github.com',
      authorization_endpoint: 'https://github.com/login/oauth/authorize',
      token_endpoint: 'https://github.com/login/oauth/access_token',
    }),
  },
  auth0: {
    scopes: ['openid', 'email', 'profile'],
    tokenEndpointAuthMethod: 'client_secret_post',
    profile: 'oidc',
    oidc: true,
    endpoints: (o: Auth0ProviderOptions) => {
      const base = `https://${String(o.domain ?? '').replace(/^https?:\/\//, '').replace(/\/+$/, '')}`
      return {
        issuer: `${base}/`,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/oauth/token`,
        userinfo_endpoint: `${base}/userinfo`,
        jwks_uri: `${base}/.well-known/jwks.json`,
        id_token_signing_alg_values_supported: ['RS256', 'HS256'],
      }
    },
    authorizationParams: (o: Auth0ProviderOptions) => {
      const params: Record<string, string> = {}
      if (o.audience) params.audience = o.audience
      return params
    },
  },
  microsoft: {
    scopes: ['openid', 'email', 'profile'],
    tokenEndpointAuthMethod: 'client_secret_basic',
    profile: 'oidc',
    oidc: true,
    endpoints: (o: MicrosoftProviderOptions) => {
      const tenant = encodeURIComponent(o.tenant || 'common')
      return {
        issuer: MULTI_TENANTS.has(o.tenant || 'common') ? `${MS_LOGIN}/{tenantid}/v2.0` : `${MS_LOGIN}/${tenant}/v2.0`,
        authorization_endpoint: `${MS_LOGIN}/${tenant}/oauth2/v2.0/authorize`,
        token_endpoint: `${MS_LOGIN}/${tenant}/oauth2/v2.0/token`,
        userinfo_endpoint: 'https://graph.microsoft.com/oidc/userinfo',
        jwks_uri: `${MS_LOGIN}/${tenant}/discovery/v2.0/keys`,
        id_token_signing_alg_values_supported: ['RS256'],
      }
    },
  },
}

export const BUILT_IN_OAUTH_PROVIDERS = Object.keys(PRESETS) as BuiltInOAuthProvider[]

/** Paths of the mock provider's endpoints (fixed). */
export const MOCK_ENDPOINTS = {
  authorize: '/mock/authorize',
  token: '/mock/token',
  userinfo: '/mock/userinfo',
} as const

export const MOCK_DEFAULTS = { clientId: 'mock-client', clientSecret: 'mock-secret', defaultUser: 0, enableInProduction: false }

/** Names a custom provider may not take. */
export const RESERVED_PROVIDER_NAMES = new Set<string>([...BUILT_IN_OAUTH_PROVIDERS, 'mock', 'password', 'custom'])

/** Letters, digits, `-` and `_`, starting with a letter or digit (it is a URL path segment). */
export const PROVIDER_NAME = /^[A-Za-z0-9][\w-]{0,63}$/

/** Names of every configured OAuth provider, the mock provider included. */
export function oauthProviderNames(providers: ProvidersOptions | undefined): string[] {
  const names: string[] = []
  for (const name of [...BUILT_IN_OAUTH_PROVIDERS, 'mock'] as const) {
    if (providers?.[name]) names.push(name)
  }
  for (const custom of Array.isArray(providers?.custom) ? providers.custom : []) {
    if (custom && typeof custom.name === 'string') names.push(custom.name)
  }
  return names
}

/** The options of a provider by name (custom ones by their `name`), or undefined. */
export function providerOptionsOf(providers: ProvidersOptions | undefined, name: string): { type: ProviderType, options: Record<string, unknown> } | undefined {
  if ((BUILT_IN_OAUTH_PROVIDERS as string[]).includes(name) || name === 'mock') {
    const options = providers?.[name as BuiltInOAuthProvider | 'mock']
    return options ? { type: name as ProviderType, options: { ...options } } : undefined
  }
  const custom = (Array.isArray(providers?.custom) ? providers.custom : []).find(p => p?.name === name)
  return custom ? { type: 'custom', options: { ...custom } } : undefined
}

function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {}
  if (!value || typeof value !== 'object') return out
  for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v
  return out
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() ? value.trim() : undefined
}

function scopesOf(value: unknown, fallback: string[]): string[] {
  if (Array.isArray(value) && value.every(s => typeof s === 'string')) return value.filter(Boolean)
  if (typeof value === 'string' && value.trim()) return value.split(/[\s,]+/).filter(Boolean)
  return [...fallback]
}

/** Explicit endpoint options over a base set. */
function withExplicitEndpoints(base: ProviderEndpoints, o: OAuthProviderOptions): ProviderEndpoints {
  const out = { ...base }
  if (nonEmpty(o.authorizationUrl)) out.authorization_endpoint = nonEmpty(o.authorizationUrl)
  if (nonEmpty(o.tokenUrl)) out.token_endpoint = nonEmpty(o.tokenUrl)
  if (nonEmpty(o.userInfoUrl)) out.userinfo_endpoint = nonEmpty(o.userInfoUrl)
  if (nonEmpty(o.jwksUrl)) out.jwks_uri = nonEmpty(o.jwksUrl)
  return out
}

/**
 * Turns the options of one provider (with an optional override from a host route's `config`) into
 * what the login flow needs. With `issuer` set, the endpoints not given explicitly are discovered.
 */
export function resolveProvider(name: string, type: ProviderType, input: Record<string, unknown>): ResolvedProvider {
  if (type === 'mock') return resolveMockProvider(input as Partial<MockProviderOptions>)
  const o = input as unknown as OAuthProviderOptions & Partial<Auth0ProviderOptions & MicrosoftProviderOptions & GitHubProviderOptions & CustomProviderOptions>
  const preset = type === 'custom' ? undefined : PRESETS[type] as ProviderPreset<typeof o>
  const scopes = scopesOf(o.scopes, preset?.scopes ?? ['openid', 'email', 'profile'])
  const issuer = nonEmpty(o.issuer)
  const explicit = !!(nonEmpty(o.authorizationUrl) && nonEmpty(o.tokenUrl))
  const speaksOidc = preset ? preset.oidc : !!issuer
  const openid = speaksOidc && scopes.includes('openid')
  const base: ProviderEndpoints = issuer ? { issuer } : (preset?.endpoints(o) ?? {})
  const discover = !!issuer && (!explicit || (openid && !nonEmpty(o.jwksUrl)))
  const authorizationParams = { ...(preset?.authorizationParams?.(o) ?? {}), ...stringMap(o.authorizationParams) }
  return {
    name,
    type,
    clientId: nonEmpty(o.clientId) ?? '',
    clientSecret: typeof o.clientSecret === 'string' ? o.clientSecret : '',
    scopes,
    authorizationParams,
    tokenEndpointAuthMethod: o.tokenEndpointAuthMethod === 'client_secret_post' || o.tokenEndpointAuthMethod === 'client_secret_basic'
      ? o.tokenEndpointAuthMethod
      : (preset?.tokenEndpointAuthMethod ?? 'client_secret_basic'),
    discoveryIssuer: discover ? issuer : undefined,
    endpoints: withExplicitEndpoints(base, o),
    openid,
    multiTenantIssuer: type === 'microsoft' && !issuer && MULTI_TENANTS.has(nonEmpty(o.tenant) ?? 'common'),
    profile: preset?.profile ?? 'oidc',
    apiUrl: type === 'github' ? (nonEmpty(o.apiUrl) ?? 'https://api.github.com').replace(/\/+$/, '') : undefined,
    redirectUrl: nonEmpty(o.redirectUrl),
  }
}

function resolveMockProvider(o: Partial<MockProviderOptions>): ResolvedProvider {
  return {
    name: 'mock',
    type: 'mock',
    clientId: nonEmpty(o.clientId) ?? MOCK_DEFAULTS.clientId,
    clientSecret: nonEmpty(o.clientSecret) ?? MOCK_DEFAULTS.clientSecret,
    scopes: ['profile', 'email'],
    authorizationParams: {},
    tokenEndpointAuthMethod: 'client_secret_basic',
    endpoints: {
      issuer: 'mock',
      authorization_endpoint: MOCK_ENDPOINTS.authorize,
      token_endpoint: MOCK_ENDPOINTS.token,
      userinfo_endpoint: MOCK_ENDPOINTS.userinfo,
    },
    openid: false,
    multiTenantIssuer: false,
    profile: 'mock',
  }
}

/** Claims of the id_token and userinfo that describe the protocol, not the user. */
const PROTOCOL_CLAIMS = new Set(['iss', 'aud', 'exp', 'iat', 'nbf', 'nonce', 'at_hash', 'c_hash', 's_hash', 'auth_time', 'azp', 'sid', 'acr', 'amr', 'jti', 'uti', 'rh', 'ver', 'aio', 'typ'])

const str = (value: unknown): string | undefined => (typeof value === 'string' && value ? value : undefined)

/**
 * The login user from an OpenID Connect profile (id_token claims over userinfo): the profile's own
 * claims plus `sub`, `email`, `emailVerified`, `name` and `picture`.
 */
export function mapOidcProfile(profile: Record<string, unknown>): AuthUser {
  const user: AuthUser = {}
  for (const [key, value] of Object.entries(profile)) {
    if (!PROTOCOL_CLAIMS.has(key) && value !== undefined) user[key] = value
  }
  const fullName = [str(profile.given_name), str(profile.family_name)].filter(Boolean).join(' ')
  user.sub = str(profile.sub)
  user.email = str(profile.email)
  user.emailVerified = profile.email_verified === true || profile.email_verified === 'true' || profile.xms_edov === true
  user.name = str(profile.name) ?? (fullName || undefined) ?? str(profile.preferred_username)
  user.picture = str(profile.picture)
  return user
}

/** One entry of GitHub's `GET /user/emails`. */
export interface GitHubEmail {
  email: string
  primary: boolean
  verified: boolean
}

/**
 * The login user from GitHub's `GET /user` and `GET /user/emails`. The email is the profile's public
 * one when GitHub lists it as verified, else the primary verified one; `emailVerified` says which.
 */
export function mapGitHubProfile(profile: Record<string, unknown>, emails: GitHubEmail[] | undefined): AuthUser {
  const id = typeof profile.id === 'number' || typeof profile.id === 'string' ? String(profile.id) : undefined
  const verified = (emails ?? []).filter(e => e && e.verified && typeof e.email === 'string')
  const publicEmail = str(profile.email)
  const publicVerified = publicEmail ? verified.find(e => e.email.toLowerCase() === publicEmail.toLowerCase()) : undefined
  const primary = verified.find(e => e.primary)
  const chosen = publicVerified ?? primary
  return {
    sub: id,
    login: str(profile.login),
    email: chosen?.email ?? publicEmail,
    emailVerified: !!chosen,
    name: str(profile.name) ?? str(profile.login),
    picture: str(profile.avatar_url),
    profileUrl: str(profile.html_url),
  }
}

const MOCK_IDENTITY = new Set(['sub', 'email', 'name', 'picture'])

/** The login user from the mock userinfo answer (a MockUser): its keys as they are, email verified. */
export function mapMockProfile(profile: Record<string, unknown>): AuthUser {
  return { ...profile, sub: str(profile.sub), email: str(profile.email), name: str(profile.name), picture: str(profile.picture), emailVerified: true }
}

/** A mock user's keys beyond sub, email, name and picture: its custom claims. */
export function mockUserClaims(user: Record<string, unknown>): Record<string, unknown> {
  const claims: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(user)) {
    if (!MOCK_IDENTITY.has(key) && key !== 'emailVerified') claims[key] = value
  }
  return claims
}

/** The warning printed when the mock provider runs in production. */
export function mockProductionWarning(): string {
  const line = '!'.repeat(78)
  return [
    line,
    '[svc-auth] WARNING: the mock login provider is ENABLED IN PRODUCTION (providers.mock.enableInProduction).',
    '[svc-auth] Anyone can sign in as any mock user through /auth/mock and /mock/*. Disable it unless this',
    '[svc-auth] server is a test deployment.',
    line,
  ].join('\n')
}
