import type { RouteContract } from '../../server/lib/edge/route-contract'
import * as req from '../../server/lib/edge/request-schemas'
import * as res from '../../server/lib/edge/response-schemas'
import { MOCK_ENDPOINTS } from './mock-preset'

/**
 * The OAuth routes: `GET <loginPath>/<name>` of every configured provider (the build adds the
 * name to the path, the operation id and the summary) and the mock provider's endpoints.
 */
export const OAUTH_ROUTES = {
  login: {
    id: 'Login',
    method: 'get',
    handler: 'oauth/server/routes/login.get',
    path: e => e.loginPath.replace(/\/+$/, ''),
    summary: 'Log in with an OAuth provider',
    description: 'Without `code`/`state`/`error`: redirects to the provider. On the way back: redirects to the callback page with an authorization code, or to the error page with `error` and `error_description`. Query: `redirect` (same-origin path to land on after login).',
    redirect: 'The provider, the callback page (`?code=`) or the error page (`?error=`)',
    errors: ['not_found'],
  },
  mockAuthorize: {
    id: 'MockAuthorize',
    method: 'get',
    handler: 'oauth/server/routes/mock-authorize.get',
    path: () => MOCK_ENDPOINTS.authorize,
    summary: 'Mock provider: authorize',
    description: 'Development OAuth provider (404 in production unless enabled). Redirects back with a 60-second code, or with `error`.',
    query: req.mockAuthorizeRequest,
    ownInput: true,
    redirect: '`redirect_uri` with `code` and `state`, or with `error` and `error_description`',
    errors: ['invalid_request', 'not_found'],
  },
  mockToken: {
    id: 'MockToken',
    method: 'post',
    handler: 'oauth/server/routes/mock-token.post',
    path: () => MOCK_ENDPOINTS.token,
    summary: 'Mock provider: token',
    description: 'Development OAuth provider: exchanges a code (PKCE S256). The client authenticates with HTTP Basic or in the body.',
    body: req.mockTokenRequest,
    bodyTypes: ['form'],
    ownInput: true,
    ok: { schema: res.mockTokenResponse, description: 'The mock access token' },
    errors: ['invalid_request', 'unsupported_grant_type', 'invalid_grant', 'invalid_client', 'not_found'],
  },
  mockUserinfo: {
    id: 'MockUserinfo',
    method: 'get',
    handler: 'oauth/server/routes/mock-userinfo.get',
    path: () => MOCK_ENDPOINTS.userinfo,
    summary: 'Mock provider: user info',
    description: 'Development OAuth provider: the mock user of a mock access token (`Authorization: Bearer`).',
    ok: { schema: res.mockUserResponse, description: 'The mock user' },
    errors: ['invalid_token', 'not_found'],
  },
} satisfies Record<string, RouteContract>
