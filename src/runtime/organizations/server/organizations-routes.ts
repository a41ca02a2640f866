import { featurePath, type RouteContract } from '../../server/lib/edge/route-contract'
import * as req from '../../server/lib/edge/request-schemas'
import * as res from '../../server/lib/edge/response-schemas'

/** The routes of organizations under `<authPath>/orgs` (registered when `organizations` is set). */
export const ORGANIZATION_ROUTES = {
  active: {
    id: 'SetActiveOrganization',
    method: 'post',
    handler: 'organizations/server/routes/active.post',
    path: featurePath('orgs', 'active'),
    summary: 'Switch the active organization',
    description: 'Makes one of the caller\'s organizations (or none, `null`) the active one of the session of the bearer, which must be the session of the refresh cookie; answers an access token whose `org` and `orgRole` claims name it. The session remembers the choice: its refreshed tokens keep it. An organization the caller is not a member of, or a malformed id, answers 404.',
    auth: 'bearerAndRefreshCookie',
    sameOrigin: true,
    body: req.activeOrganizationRequest,
    ok: { schema: res.activeOrganizationResponse, description: 'An access token with the claims of the organization' },
    errors: ['unauthorized', 'session_revoked', 'session_stale', 'invalid_refresh_token', 'impersonated_session', 'not_found'],
  },
} satisfies Record<string, RouteContract>
