import { defineAuthRoute } from '../../../server/utils/auth-context'
import { guarded } from '../../../server/lib/edge/route-contract'
import { requireAuditReader } from '../audit-access'
import { exportAuditLog } from '../audit-export'
import { AUDIT_ROUTES } from '../audit-routes'

export default defineAuthRoute(guarded(AUDIT_ROUTES.export, (ctx, event, range, reader) => exportAuditLog(ctx, event, reader, range), requireAuditReader))
