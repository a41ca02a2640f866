import { revokeSessions, requireSessionOwner } from '../../lib/core/session-list'
import { guarded } from '../../lib/edge/route-contract'
import { defineAuthRoute } from '../../utils/auth-context'
import { CORE_ROUTES } from '../../core-routes'

/** Sessions opened by someone impersonating the user are not the user's: they are left alone. */
export default defineAuthRoute(guarded(CORE_ROUTES.revokeOthers, async (ctx, event) => {
  const owner = await requireSessionOwner(event, ctx)
  const revoked = await revokeSessions(ctx, owner.sub, 'user', { except: owner.sid, own: true, event })
  return { success: true as const, revoked }
}))
