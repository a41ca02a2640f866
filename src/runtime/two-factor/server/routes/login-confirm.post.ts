/**
 * POST /auth/two-factor/login-confirm (<authPath>/two-factor/login-confirm)
 * Body `{ flow, code }`: the first code of the app for the enrolment of a pending login. Saves
 * the enrolment through `twoFactor.save` and completes the login like verify.
 * 200 `{ success: true, redirect, recoveryCodes }` (recovery codes shown once)
 * 400 two_factor_invalid_code · 400 too_many_attempts · 400 two_factor_login_expired
 * 400 two_factor_enrolment_expired (no secret made yet, or not a login that enrols)
 * 400 bad_request · 401 code_binding_mismatch · 403 cross_origin_request
 * 409 two_factor_already_enabled (enrolled meanwhile)
 */
import { confirmLoginEnrolment } from '../two-factor-flow'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => confirmLoginEnrolment(ctx, event))
