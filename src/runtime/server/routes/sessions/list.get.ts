import { listSessions, requireSessionOwner } from '../../lib/core/session-list'
import { guarded } from '../../lib/edge/route-contract'
import { defineAuthRoute } from '../../utils/auth-context'
import { CORE_ROUTES } from '../../core-routes'

export default defineAuthRoute(guarded(CORE_ROUTES.listSessions, async (ctx, event) => {
  const owner = await requireSessionOwner(event, ctx)
  return { sessions: await listSessions(ctx, owner.sub, { currentSid: owner.sid, own: true }) }
}))
