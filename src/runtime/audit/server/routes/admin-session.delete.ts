import { getRouterParam } from 'h3'
import { authError, message } from '../../../server/lib/edge/errors'
import { sessionIdSchema } from '../../../server/lib/edge/request-schemas'
import { revokeSession } from '../../../server/lib/core/session-list'
import { guarded } from '../../../server/lib/edge/route-contract'
import { defineAuthRoute } from '../../../server/utils/auth-context'
import { AUDIT_ADMIN_ROUTES } from '../admin-routes'
import { requireAuditAdmin, userIdParam } from '../admin-access'

/** Reason `host`, as `revokeUserSession`: the application, not the user, ended it; the event's actor is the administrator. */
export default defineAuthRoute(guarded(AUDIT_ADMIN_ROUTES.revokeSession, async (ctx, event, _input, admin) => {
  const userId = userIdParam(event)
  const id = sessionIdSchema.safeParse(getRouterParam(event, 'sessionId', { decode: true }))
  if (!id.success || !(await revokeSession(ctx, userId, id.data, 'host', { event, caller: admin }))) throw authError('not_found', message('no_such_session'))
  return { success: true as const }
}, requireAuditAdmin))
