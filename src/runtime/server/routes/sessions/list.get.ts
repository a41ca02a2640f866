/**
 * GET /auth/sessions (endpoints.sessionsPath)
 * Header `Authorization: Bearer <access token>`. Lists the caller's live sessions (logins), most
 * recently used first: `{ sessions: [{ id, current, createdAt, lastUsedAt, provider?, client }] }`
 * with `current: true` on the session of the token that asked. `client` is coarse (`userAgent`
 * family, `address` prefix); nothing secret is listed.
 * 401 unauthorized · 401 session_revoked · 403 impersonated_session (impersonated tokens cannot
 * manage the user's sessions) · 404 not_found (token refresh disabled: there are no sessions)
 */
import { listSessions, requireSessionOwner } from '../../lib/core/session-list'
import { defineAuthRoute } from '../../utils/auth-context'

export default defineAuthRoute(async (event, ctx) => {
  const owner = await requireSessionOwner(event, ctx)
  return { sessions: await listSessions(ctx, owner.sub, { currentSid: owner.sid, own: true }) }
})
