/**
 * POST /auth/two-factor/recovery-codes (<authPath>/two-factor/recovery-codes)
 * Header `Authorization: Bearer <access token>`; body `{ code }`: a current code of the app.
 * Replaces the recovery codes (the old ones stop working).
 * 200 `{ recoveryCodes }` (shown once)
 * 400 two_factor_invalid_code (wrong or used code) · 400 two_factor_not_enabled · 400 bad_request
 * 401 unauthorized · 401 session_revoked · 403 impersonated_session · 403 cross_origin_request
 * 403 reauthentication_required (the session logged in longer ago than `sessions.recentLogin`)
 * 429 rate_limited (the user's failure budget is spent; Retry-After)
 */
import { regenerateRecoveryCodes } from '../settings'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => regenerateRecoveryCodes(ctx, event))
