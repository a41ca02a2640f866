/**
 * The built-in OAuth providers, one entry per key of `BuiltInOAuthProviders` (types/providers.ts; the
 * compiler checks they agree). Option, login route, env keys and `defineOAuth<label>EventHandler` derive
 * from the entry (see docs/oauth.md).
 */
import type { BuiltInOAuthProviders, GitHubProviderOptions } from '../../types/providers'
import type { OAuthPreset } from './preset'
import { fetchGitHubProfile, mapDiscordProfile } from './profiles'

const OIDC_SCOPES = ['openid', 'email', 'profile']
const MS_LOGIN = 'https://login.microsoftonline.com'
const MULTI_TENANTS = new Set(['common', 'organizations', 'consumers'])

/** An Entra ID tenant setting that admits several tenants: the id_token's issuer is its own `tid`'s. */
const isMultiTenant = (o: { tenant?: string }): boolean => MULTI_TENANTS.has(o.tenant || 'common')

/** A base URL without trailing slashes, `fallback` when empty. */
const baseOf = (value: string | undefined, fallback = ''): string => (value?.trim() || fallback).replace(/\/+$/, '')

const GITHUB_API = 'https://api.github.com'

/**
 * GitHub's REST API: `apiUrl` when set, else `<origin>/api/v3` for GitHub Enterprise Server (`issuer` or
 * `tokenUrl` elsewhere), else the public API: a token another server issued never goes to api.github.com.
 */
export function gitHubApiUrl(o: GitHubProviderOptions): string {
  const api = baseOf(o.apiUrl, GITHUB_API)
  if (api !== GITHUB_API) return api
  const server = [o.issuer, o.tokenUrl].find(url => typeof url === 'string' && URL.canParse(url))
  const origin = server ? new URL(server).origin : 'https://github.com'
  return origin === 'https://github.com' ? GITHUB_API : `${origin}/api/v3`
}

export const OAUTH_PRESETS = {
  google: {
    label: 'Google',
    scopes: OIDC_SCOPES,
    tokenEndpointAuthMethod: 'client_secret_basic',
    oidc: true,
    defaults: {},
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
    label: 'GitHub',
    scopes: ['user:email', 'read:user'],
    tokenEndpointAuthMethod: 'client_secret_post',
    oidc: false,
    defaults: { apiUrl: GITHUB_API },
    endpoints: () => ({
      issuer: 'https://github.com',
      authorization_endpoint: 'https://github.com/login/oauth/authorize',
      token_endpoint: 'https://github.com/login/oauth/access_token',
    }),
    fetchProfile: (request, o) => fetchGitHubProfile(request, gitHubApiUrl(o)),
  },

  auth0: {
    label: 'Auth0',
    scopes: OIDC_SCOPES,
    tokenEndpointAuthMethod: 'client_secret_post',
    oidc: true,
    defaults: { domain: '', audience: '' },
    requires: ['domain'],
    endpoints: (o) => {
      const base = `https://${baseOf(o.domain).replace(/^https?:\/\//, '')}`
      return {
        issuer: `${base}/`,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/oauth/token`,
        userinfo_endpoint: `${base}/userinfo`,
        jwks_uri: `${base}/.well-known/jwks.json`,
        id_token_signing_alg_values_supported: ['RS256', 'HS256'],
        end_session_endpoint: `${base}/oidc/logout`,
      }
    },
    authorizationParams: (o): Record<string, string> => (o.audience ? { audience: o.audience } : {}),
  },

  microsoft: {
    label: 'Microsoft',
    scopes: OIDC_SCOPES,
    tokenEndpointAuthMethod: 'client_secret_basic',
    oidc: true,
    defaults: { tenant: 'common' },
    check: o => (o.tenant !== undefined && !(typeof o.tenant === 'string' && /^[\w.-]+$/.test(o.tenant)) ? ['tenant must be a tenant id, a domain, \'common\', \'organizations\' or \'consumers\'.'] : []),
    endpoints: (o) => {
      const tenant = encodeURIComponent(o.tenant || 'common')
      return {
        issuer: isMultiTenant(o) ? `${MS_LOGIN}/{tenantid}/v2.0` : `${MS_LOGIN}/${tenant}/v2.0`,
        authorization_endpoint: `${MS_LOGIN}/${tenant}/oauth2/v2.0/authorize`,
        token_endpoint: `${MS_LOGIN}/${tenant}/oauth2/v2.0/token`,
        userinfo_endpoint: 'https://graph.microsoft.com/oidc/userinfo',
        jwks_uri: `${MS_LOGIN}/${tenant}/discovery/v2.0/keys`,
        id_token_signing_alg_values_supported: ['RS256'],
        end_session_endpoint: `${MS_LOGIN}/${tenant}/oauth2/v2.0/logout`,
      }
    },
    tenantIssuer: isMultiTenant,
  },

  /** Keycloak (OpenID Connect; `baseUrl` and `realm`, or the realm's URL as `issuer`). */
  keycloak: {
    label: 'Keycloak',
    scopes: OIDC_SCOPES,
    tokenEndpointAuthMethod: 'client_secret_basic',
    oidc: true,
    defaults: { baseUrl: '', realm: '' },
    requires: ['baseUrl', 'realm'],
    endpoints: (o) => {
      const issuer = `${baseOf(o.baseUrl)}/realms/${encodeURIComponent(o.realm ?? '')}`
      const oidc = `${issuer}/protocol/openid-connect`
      return {
        issuer,
        authorization_endpoint: `${oidc}/auth`,
        token_endpoint: `${oidc}/token`,
        userinfo_endpoint: `${oidc}/userinfo`,
        jwks_uri: `${oidc}/certs`,
        id_token_signing_alg_values_supported: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'],
        end_session_endpoint: `${oidc}/logout`,
      }
    },
  },

  gitlab: {
    label: 'GitLab',
    scopes: ['openid', 'profile', 'email'],
    tokenEndpointAuthMethod: 'client_secret_basic',
    oidc: true,
    defaults: { baseUrl: 'https://gitlab.com' },
    endpoints: (o) => {
      const base = baseOf(o.baseUrl, 'https://gitlab.com')
      return {
        issuer: base,
        authorization_endpoint: `${base}/oauth/authorize`,
        token_endpoint: `${base}/oauth/token`,
        userinfo_endpoint: `${base}/oauth/userinfo`,
        jwks_uri: `${base}/oauth/discovery/keys`,
        id_token_signing_alg_values_supported: ['RS256'],
      }
    },
  },

  discord: {
    label: 'Discord',
    scopes: ['identify', 'email'],
    tokenEndpointAuthMethod: 'client_secret_post',
    oidc: false,
    defaults: { baseUrl: 'https://discord.com' },
    endpoints: (o) => {
      const base = baseOf(o.baseUrl, 'https://discord.com')
      return {
        issuer: base,
        authorization_endpoint: `${base}/oauth2/authorize`,
        token_endpoint: `${base}/api/oauth2/token`,
        userinfo_endpoint: `${base}/api/users/@me`,
      }
    },
    mapProfile: mapDiscordProfile,
  },
} satisfies { [K in keyof BuiltInOAuthProviders]: OAuthPreset<BuiltInOAuthProviders[K]> }
