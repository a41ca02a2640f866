/**
 * POST /auth/sessions/revoke-others (endpoints.sessionsPath + '/revoke-others')
 * Header `Authorization: Bearer <access token>`, no body. Ends every session of the caller but
 * the one of this token (sessions opened by someone impersonating the user are not the user's
 * and are left alone). `svc:session:revoked` runs for each with reason `user`.
 * 200 `{ success: true, revoked: <number> }`
 * 401 unauthorized · 401 session_revoked · 403 impersonated_session · 404 not_found (token
 * refresh disabled) · 413 payload_too_large
 */
import { revokeSessions, requireSessionOwner } from '../../lib/core/session-list'
import { defineAuthRoute } from '../../utils/auth-context'

export default defineAuthRoute(async (event, ctx) => {
  const owner = await requireSessionOwner(event, ctx)
  const revoked = await revokeSessions(ctx, owner.sub, 'user', { except: owner.sid, own: true })
  return { success: true as const, revoked }
})
