import type { RouteContract } from '../../server/lib/edge/route-contract'
import * as req from '../../server/lib/edge/request-schemas'
import * as res from '../../server/lib/edge/response-schemas'
import { z } from 'zod'
import { underPath } from '../../shared/paths'
import { MOCK_ENDPOINTS } from './mock-preset'
import { PROVIDER_NAME } from './provider-registry'

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
  backchannelLogout: {
    id: 'BackchannelLogout',
    method: 'post',
    handler: 'oauth/server/routes/backchannel-logout.post',
    path: e => underPath(e.authPath, 'backchannel-logout', ':provider'),
    summary: 'OpenID Connect Back-Channel Logout',
    description: 'Called by an OpenID provider, server to server (register `<publicUrl><authPath>/backchannel-logout/<provider>` there): the form field `logout_token` is verified (signature with the provider\'s keys, `iss`, `aud`, `iat`, `exp`, the logout event, `sid` or `sub`, no `nonce`, a `jti` used once) and the sessions of the provider\'s `sid` (or of its `sub`) end. No same-origin check; bodies above 16 KB are refused.',
    params: { provider: z.string().regex(PROVIDER_NAME) },
    body: req.backchannelLogoutRequest,
    bodyTypes: ['form'],
    ownInput: true,
    ok: { schema: res.successResponse, description: 'The sessions named have ended (or none of them was known)' },
    errors: ['invalid_request', 'not_found'],
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
