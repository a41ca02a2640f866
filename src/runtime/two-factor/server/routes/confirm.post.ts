/**
 * POST /auth/two-factor/confirm (<authPath>/two-factor/confirm)
 * Header `Authorization: Bearer <access token>`; body `{ code }`: the first code of the app.
 * Saves the enrolment through the host's `twoFactor.save` and makes the recovery codes.
 * 200 `{ recoveryCodes }` (shown once)
 * 400 two_factor_invalid_code · 400 two_factor_enrolment_expired (none pending, expired or
 * confirmed already) · 400 bad_request · 401 unauthorized · 401 session_revoked
 * 403 impersonated_session · 403 cross_origin_request · 403 reauthentication_required (the
 * session logged in longer ago than `sessions.recentLogin`) · 409 two_factor_already_enabled
 */
import { confirmEnrolment } from '../settings'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => confirmEnrolment(ctx, event))
