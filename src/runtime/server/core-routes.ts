import type { EndpointOptions } from '../types/options'
import type { RouteContract } from './lib/edge/route-contract'
import * as req from './lib/edge/request-schemas'
import * as res from './lib/edge/response-schemas'

/** `<sessionsPath>/<rest>`, without a doubled slash. */
const sessionsPath = (e: EndpointOptions, rest: string) => `${e.sessionsPath.replace(/\/$/, '')}/${rest}`
const SESSION_ERRORS = ['unauthorized', 'session_revoked', 'session_stale', 'impersonated_session', 'not_found'] as const satisfies RouteContract['errors']

/** The module's own routes (tokens, user, keys, sessions) at their configured paths. */
export const CORE_ROUTES = {
  token: {
    id: 'ExchangeCode',
    method: 'post',
    handler: 'server/routes/token.post',
    path: e => e.tokenPath,
    summary: 'Exchange an authorization code for an access token',
    description: 'Exchanges the single-use code of the callback page for an access token and sets the HttpOnly refresh cookie (when token refresh is on). A code bound to a browser is only accepted with that browser\'s code cookie; a code presented once is used up whatever the outcome.',
    sameOrigin: true,
    body: req.tokenRequest,
    ok: { schema: res.tokenResponse, description: 'The access token', setsRefreshCookie: true },
    errors: ['invalid_code', 'code_binding_mismatch'],
  },
  refresh: {
    id: 'Refresh',
    method: 'post',
    handler: 'server/routes/refresh.post',
    path: e => e.refreshPath,
    summary: 'Get a new access token with the refresh cookie',
    description: 'Rotates the refresh token of the cookie and signs a new access token. A rotated token used again after the grace period revokes the whole session.',
    auth: 'refreshCookie',
    sameOrigin: true,
    ok: { schema: res.refreshResponse, description: 'A new access token (and the successor refresh cookie)', setsRefreshCookie: true },
    errors: ['invalid_refresh_token', 'refresh_token_reused', 'refresh_cookie_conflict', 'impersonated_session', 'not_found'],
  },
  logout: {
    id: 'Logout',
    method: 'post',
    handler: 'server/routes/logout.post',
    path: e => e.logoutPath,
    summary: 'Log out',
    description: 'Revokes the session of the refresh cookie (any token of the session ends it) and deletes the cookie. Succeeds without a cookie too. With `{ provider: true }` and a session that came from an OpenID provider with an end-session endpoint, `redirect` is where the browser ends its session there (RP-Initiated Logout).',
    auth: 'refreshCookie',
    sameOrigin: true,
    body: req.logoutRequest,
    ok: { schema: res.logoutResponse, description: 'Logged out' },
    errors: [],
  },
  me: {
    id: 'CurrentUser',
    method: 'get',
    handler: 'server/routes/me.get',
    path: e => e.userInfoPath,
    summary: 'The current user',
    description: 'The claims of the access token, custom claims included.',
    auth: 'bearer',
    ok: { schema: res.claimsResponse, description: 'The token\'s claims' },
    errors: ['unauthorized', 'session_revoked', 'session_stale'],
  },
  jwks: {
    id: 'Jwks',
    method: 'get',
    handler: 'server/routes/jwks.get',
    path: e => e.jwksPath,
    summary: 'Public keys of the access tokens',
    description: 'The RS256 public keys for services that verify access tokens. With HS256 there is none to publish (404).',
    ok: { schema: res.jwksResponse, description: 'JSON Web Key Set' },
    errors: ['not_found'],
  },
  listSessions: {
    id: 'ListSessions',
    method: 'get',
    handler: 'server/routes/sessions/list.get',
    path: e => e.sessionsPath,
    summary: 'The caller\'s sessions',
    description: 'The caller\'s live sessions (logins), most recently used first, with `current: true` on the session of the asking token. Nothing secret is listed.',
    auth: 'bearer',
    ok: { schema: res.sessionsResponse, description: 'The sessions' },
    errors: [...SESSION_ERRORS],
  },
  revokeOthers: {
    id: 'RevokeOtherSessions',
    method: 'post',
    handler: 'server/routes/sessions/revoke-others.post',
    path: e => sessionsPath(e, 'revoke-others'),
    summary: 'End every other session',
    description: 'Ends every session of the caller but the one of this token.',
    auth: 'bearer',
    ok: { schema: res.revokeOthersResponse, description: 'How many sessions were ended' },
    errors: [...SESSION_ERRORS],
  },
  revokeSession: {
    id: 'RevokeSession',
    method: 'delete',
    handler: 'server/routes/sessions/revoke.delete',
    path: e => sessionsPath(e, ':id'),
    summary: 'End one session',
    description: 'Ends one of the caller\'s sessions (the current one too). Another user\'s session id answers 404.',
    auth: 'bearer',
    params: { id: req.sessionIdSchema },
    ok: { schema: res.successResponse, description: 'The session has ended' },
    errors: [...SESSION_ERRORS],
  },
} satisfies Record<string, RouteContract>
