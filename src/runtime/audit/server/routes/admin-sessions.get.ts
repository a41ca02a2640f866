import { authError, message } from '../../../server/lib/edge/errors'
import { listSessions } from '../../../server/lib/core/session-list'
import { guarded } from '../../../server/lib/edge/route-contract'
import { defineAuthRoute } from '../../../server/utils/auth-context'
import { AUDIT_ADMIN_ROUTES } from '../admin-routes'
import { requireAuditAdmin, userIdParam } from '../admin-access'

/** Impersonations of the user are listed too (with `impersonatedBy`); `current` marks the administrator's own session. */
export default defineAuthRoute(guarded(AUDIT_ADMIN_ROUTES.sessions, async (ctx, event, _input, admin) => {
  if (!ctx.options.tokenRefresh.enabled) throw authError('not_found', message('sessions_need_refresh'))
  const currentSid = typeof admin.sid === 'string' ? admin.sid : undefined
  return { sessions: await listSessions(ctx, userIdParam(event), { currentSid }) }
}, requireAuditAdmin))
