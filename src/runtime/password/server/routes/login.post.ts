/**
 * POST /auth/password/login (<authPath>/password/login)
 * Body `{ email: string, password: string }`. Checks the password (an unknown email costs the
 * same bcrypt work) and delivers a 6-digit code (action 'login').
 * 200 `{ success: true }`
 * 400 invalid_credentials (one message for an unknown email and a wrong password) · 400
 * invalid_email · 400 bad_request · 403 cross_origin_request (cross-site) · 429 rate_limited (Retry-After)
 * 500 send_failed (delivery failed; no usable code is left)
 */
import { login } from '../password-flows'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => login(ctx, event))
