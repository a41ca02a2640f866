import { endImpersonation } from '../impersonate'
import { guarded } from '../../../server/lib/edge/route-contract'
import { defineAuthRoute } from '../../../server/utils/auth-context'
import { IMPERSONATION_ROUTES } from '../impersonation-routes'

/**
 * The impersonation record is consumed atomically, the original user looked up again and
 * restored; the `svc:impersonate:end` hook runs before anything is handed out (see
 * `endImpersonation`).
 */
export default defineAuthRoute(guarded(IMPERSONATION_ROUTES.unimpersonate, endImpersonation))
