import type { RouteContract } from '../../server/lib/edge/route-contract'
import * as req from '../../server/lib/edge/request-schemas'
import * as res from '../../server/lib/edge/response-schemas'

/** The impersonation routes (registered always: they answer 404 while `impersonation.enabled` is off). */
export const IMPERSONATION_ROUTES = {
  impersonate: {
    id: 'Impersonate',
    method: 'post',
    handler: 'impersonation/server/routes/impersonate.post',
    path: e => e.impersonatePath,
    summary: 'Start impersonating a user',
    description: 'Issues an access token of the target user and a refresh cookie of the impersonated session (it cannot be refreshed). Statuses raised by the host\'s check hook or fetchTarget pass through.',
    auth: 'bearer',
    body: req.impersonateRequest,
    ok: { schema: res.accessTokenResponse, description: 'Access token of the impersonated user', setsRefreshCookie: true },
    errors: ['unauthorized', 'session_revoked', 'session_stale', 'impersonation_chain', 'forbidden', 'not_found'],
  },
  unimpersonate: {
    id: 'Unimpersonate',
    method: 'post',
    handler: 'impersonation/server/routes/unimpersonate.post',
    path: e => e.unimpersonatePath,
    summary: 'End an impersonation',
    description: 'With the impersonated access token and the refresh cookie of the impersonated session: restores the original user in the session their token belonged to (it never creates one; 401 session_revoked when that session has ended).',
    auth: 'bearerAndRefreshCookie',
    sameOrigin: true,
    ok: { schema: res.accessTokenResponse, description: 'Access token of the original user', setsRefreshCookie: true },
    errors: ['not_impersonating', 'unauthorized', 'impersonation_ended', 'session_revoked', 'session_stale', 'impersonation_session_mismatch', 'not_found'],
  },
} satisfies Record<string, RouteContract>
