import { defineAuthRoute } from '../../../server/utils/auth-context'
import { guarded } from '../../../server/lib/edge/route-contract'
import { requireAuditReader } from '../audit-access'
import { queryAuditLog } from '../audit-query'
import { AUDIT_ROUTES } from '../audit-routes'

export default defineAuthRoute(guarded(AUDIT_ROUTES.list, (ctx, _event, query, reader) => queryAuditLog(ctx, reader, query), requireAuditReader))
