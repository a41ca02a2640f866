import { guarded } from '../../../server/lib/edge/route-contract'
import { defineAuthRoute } from '../../../server/utils/auth-context'
import { AUDIT_ADMIN_ROUTES } from '../admin-routes'
import { requireAuditAdmin } from '../admin-access'
import { findUsers } from '../user-search'

export default defineAuthRoute(guarded(AUDIT_ADMIN_ROUTES.users, async (ctx, _event, input) => ({ users: await findUsers(ctx, input.q) }), requireAuditAdmin))
