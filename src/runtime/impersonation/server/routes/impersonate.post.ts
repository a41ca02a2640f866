import { impersonationRequester, startImpersonation } from '../impersonate'
import { guarded } from '../../../server/lib/edge/route-contract'
import { defineAuthRoute } from '../../../server/utils/auth-context'
import { IMPERSONATION_ROUTES } from '../impersonation-routes'

/**
 * Order: chain check → `svc:impersonate:check` hook → canImpersonate → `svc:impersonate:fetchTarget`
 * hook → fetchTarget → records and token → `svc:impersonate:start` hook → answer (see
 * `startImpersonation`). The refresh cookie of the impersonated session replaces the requester's
 * own (that token is retired; the way back continues its session).
 */
export default defineAuthRoute(guarded(IMPERSONATION_ROUTES.impersonate, (ctx, event, body, requester) => startImpersonation(ctx, event, requester, body), impersonationRequester))
