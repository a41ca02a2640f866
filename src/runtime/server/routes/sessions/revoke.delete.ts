import { getRouterParam } from 'h3'
import { authError, message } from '../../lib/edge/errors'
import { sessionIdSchema } from '../../lib/edge/request-schemas'
import { clearRefreshCookie, cookieSessionId } from '../../lib/core/session-tokens'
import { revokeSession, requireSessionOwner } from '../../lib/core/session-list'
import { guarded } from '../../lib/edge/route-contract'
import { defineAuthRoute } from '../../utils/auth-context'
import { CORE_ROUTES } from '../../core-routes'

/** When the request carries this session's own refresh cookie, the answer deletes it and the presence flag. */
export default defineAuthRoute(guarded(CORE_ROUTES.revokeSession, async (ctx, event) => {
  const owner = await requireSessionOwner(event, ctx)
  const id = sessionIdSchema.safeParse(getRouterParam(event, 'id', { decode: true }))
  // Read before the revocation, which makes the cookie unreadable.
  const ownCookie = id.success && id.data === owner.sid && await cookieSessionId(event, ctx) === id.data
  if (!id.success || !(await revokeSession(ctx, owner.sub, id.data, 'user', { own: true, event }))) {
    throw authError('not_found', message('no_such_session'))
  }
  if (ownCookie) clearRefreshCookie(event, ctx)
  return { success: true as const }
}))
