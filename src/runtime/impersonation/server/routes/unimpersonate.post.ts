import { endImpersonation } from '../impersonate'
import { guarded } from '../../../server/lib/edge/route-contract'
import { defineAuthRoute } from '../../../server/utils/auth-context'
import { IMPERSONATION_ROUTES } from '../impersonation-routes'

/** POST unimpersonate: restores the original user (see `endImpersonation`). */
export default defineAuthRoute(guarded(IMPERSONATION_ROUTES.unimpersonate, endImpersonation))
