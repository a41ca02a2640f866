import { impersonationRequester, startImpersonation } from '../impersonate'
import { guarded } from '../../../server/lib/edge/route-contract'
import { defineAuthRoute } from '../../../server/utils/auth-context'
import { IMPERSONATION_ROUTES } from '../impersonation-routes'

/** POST impersonate: the impersonated session's refresh cookie replaces the requester's (see `startImpersonation`). */
export default defineAuthRoute(guarded(IMPERSONATION_ROUTES.impersonate, (ctx, event, body, requester) => startImpersonation(ctx, event, requester, body), impersonationRequester))
