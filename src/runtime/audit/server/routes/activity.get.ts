import type { AuthClaims } from '../../../types/auth'
import { defineAuthRoute } from '../../../server/utils/auth-context'
import { requireCaller } from '../../../server/lib/core/authenticate'
import { guarded } from '../../../server/lib/edge/route-contract'
import { AUDIT_ROUTES } from '../audit-routes'
import { activityPage } from '../user-activity'

/** The caller's own activity; never through an impersonated session (as the sessions list: it shows the user's logins). */
export default defineAuthRoute(guarded(AUDIT_ROUTES.activity, (ctx, _event, { cursor }, caller: AuthClaims) => activityPage(ctx, caller.sub, cursor), (ctx, event) => requireCaller(event, ctx, true)))
