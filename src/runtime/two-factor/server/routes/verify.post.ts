/**
 * POST /auth/two-factor/verify (<authPath>/two-factor/verify)
 * Body `{ flow, code }` or `{ flow, recoveryCode }`, from the browser that passed the first factor
 * (its code cookie). Completes the pending login: `svc:success`, then a browser-bound
 * authorization code.
 * 200 `{ success: true, redirect }` (the callback page with the code)
 * 400 two_factor_invalid_code (wrong, or used before) · 400 too_many_attempts (the pending login
 * is gone: log in again) · 400 two_factor_login_expired · 400 two_factor_not_enabled (the login
 * must enrol first) · 400 bad_request · 401 code_binding_mismatch (another browser; the pending
 * login is burnt) · 403 cross_origin_request · 429 rate_limited (the user's failure budget is
 * spent; Retry-After)
 */
import { verifyLogin } from '../two-factor-flow'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => verifyLogin(ctx, event))
