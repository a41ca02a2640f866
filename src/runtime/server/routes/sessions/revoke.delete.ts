/**
 * DELETE /auth/sessions/:id (endpoints.sessionsPath + '/:id')
 * Header `Authorization: Bearer <access token>`. Ends one of the caller's sessions (the current
 * one too: that is a logout of this client): its refresh token stops working and its access
 * tokens are refused from now on. `svc:session:revoked` runs with reason `user`. When the request
 * carries this session's own refresh cookie, the answer deletes it and the presence flag.
 * 200 `{ success: true }`
 * 401 unauthorized · 401 session_revoked · 403 impersonated_session · 404 not_found (no such
 * session of the caller, also for another user's session id; or token refresh disabled)
 */
import { getRouterParam } from 'h3'
import { authError } from '../../lib/edge/errors'
import { sessionIdSchema } from '../../lib/edge/request-schemas'
import { clearRefreshCookie, cookieSessionId } from '../../lib/core/session-tokens'
import { revokeSession, requireSessionOwner } from '../../lib/core/session-list'
import { defineAuthRoute } from '../../utils/auth-context'

export default defineAuthRoute(async (event, ctx) => {
  const owner = await requireSessionOwner(event, ctx)
  const id = sessionIdSchema.safeParse(getRouterParam(event, 'id', { decode: true }))
  // Read before the revocation, which makes the cookie unreadable.
  const ownCookie = id.success && id.data === owner.sid && await cookieSessionId(event, ctx) === id.data
  if (!id.success || !(await revokeSession(ctx, owner.sub, id.data, 'user', { own: true }))) {
    throw authError('not_found', 'No such session')
  }
  if (ownCookie) clearRefreshCookie(event, ctx)
  ctx.logger.security('session_revoked_by_user', { user: owner.sub })
  return { success: true as const }
})
