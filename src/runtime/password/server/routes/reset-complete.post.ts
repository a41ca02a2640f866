/**
 * POST /auth/password/reset-complete (<authPath>/password/reset-complete)
 * Body `{ sessionId: string, newPassword: string }`. Consumes the reset session, persists the
 * new hash through onUserPersist and revokes every refresh token of the user.
 * 200 `{ success: true }`
 * 400 invalid_reset_session (unknown, expired or used) · 400 password_policy (the session stays
 * usable) · 400 bad_request · 403 cross_origin_request (cross-site) · 429 rate_limited (Retry-After)
 */
import { resetComplete } from '../new-password'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => resetComplete(ctx, event))
