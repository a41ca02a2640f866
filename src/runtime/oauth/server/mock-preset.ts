import type { AuthUser } from '../../types/auth'
import type { ModuleOptions } from '../../types/options'
import type { MockProviderOptions } from '../../types/providers'
import type { FetchedUser, ProfileRequest, ResolvedProvider } from './preset'
import { asSubject } from '../../server/lib/core/subject'
import { getJson } from './profiles'
import { nonEmptyString, trimmedString } from '../../shared/values'

/** Paths of the mock provider's endpoints (fixed). */
export const MOCK_ENDPOINTS = {
  authorize: '/mock/authorize',
  token: '/mock/token',
  userinfo: '/mock/userinfo',
} as const

export const MOCK_DEFAULTS = { clientId: 'mock-client', clientSecret: 'mock-secret', defaultUser: 0, enableInProduction: false }

/** The mock provider serves requests in development, and in production only with `enableInProduction: true`. */
export function isMockEnabled(options: Pick<ModuleOptions, 'providers'>, dev: boolean): boolean {
  const mock = options.providers?.mock
  return !!mock && (dev || mock.enableInProduction === true)
}

const MOCK_IDENTITY = new Set(['sub', 'email', 'name', 'picture'])

/** The login user from the mock userinfo answer (a MockUser): its keys as they are, email verified. */
export function mapMockProfile(profile: Record<string, unknown>): AuthUser {
  return { ...profile, sub: asSubject(profile.sub), email: nonEmptyString(profile.email), name: nonEmptyString(profile.name), picture: nonEmptyString(profile.picture), emailVerified: true }
}

/** A mock user's keys beyond sub, email, name and picture: its custom claims. */
export function mockUserClaims(user: Record<string, unknown>): Record<string, unknown> {
  const claims: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(user)) {
    if (!MOCK_IDENTITY.has(key) && key !== 'emailVerified') claims[key] = value
  }
  return claims
}

/** The mock user from `/mock/userinfo`; its extra keys become the provider's claims. */
async function fetchMockProfile({ as, tokens, fetchFn }: ProfileRequest): Promise<FetchedUser> {
  const info = await getJson(as.userinfo_endpoint!, tokens.access_token, fetchFn)
  return { user: mapMockProfile(info), providerClaims: mockUserClaims(info) }
}

/** The mock provider for the login flow: endpoints on this app, `user` and `mock_error` passed on, the user from userinfo. */
export function resolveMockProvider(o: Partial<MockProviderOptions>): ResolvedProvider {
  return {
    name: 'mock',
    type: 'mock',
    clientId: trimmedString(o.clientId) ?? MOCK_DEFAULTS.clientId,
    clientSecret: trimmedString(o.clientSecret) ?? MOCK_DEFAULTS.clientSecret,
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
    local: true,
    forwardedQuery: { user: 'login_hint', mock_error: 'mock_error' },
    postLogoutRedirectUrls: [],
    fetchProfile: fetchMockProfile,
  }
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
