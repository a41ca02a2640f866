/**
 * POST /auth/two-factor/login-enrol (<authPath>/two-factor/login-enrol)
 * Body `{ flow }` of a pending login whose user must enrol (the page's `?enrol=1`), from the
 * browser that passed the first factor. A new TOTP secret, kept (encrypted) with the pending
 * login; starting again replaces it.
 * 200 `{ uri, secret }` (shown once)
 * 400 two_factor_login_expired · 400 bad_request · 401 code_binding_mismatch (another browser;
 * the pending login is burnt) · 403 cross_origin_request · 409 two_factor_already_enabled (the
 * user is enrolled: verify a code instead)
 */
import { startLoginEnrolment } from '../two-factor-flow'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => startLoginEnrolment(ctx, event))
