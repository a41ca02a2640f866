/**
 * POST /auth/two-factor/disable (<authPath>/two-factor/disable)
 * Header `Authorization: Bearer <access token>`; body `{ password }` (password accounts),
 * `{ code }` or `{ recoveryCode }`. Deletes the second factor (`twoFactor.save(userId, null)`).
 * 200 `{ success: true }`
 * 400 two_factor_invalid_code · 400 current_password_incorrect · 400 no_password_account
 * 400 two_factor_not_enabled · 400 bad_request · 401 unauthorized · 401 session_revoked
 * 403 impersonated_session · 403 cross_origin_request · 403 reauthentication_required (the
 * session logged in longer ago than `sessions.recentLogin`) · 429 rate_limited (Retry-After)
 */
import { disableTwoFactor } from '../settings'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => disableTwoFactor(ctx, event))
