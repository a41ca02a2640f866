/**
 * POST /auth/password/register (<authPath>/password/register)
 * Body `{ email: string, password: string }`. Stores a pending registration (email + bcrypt hash)
 * with a 6-digit code and delivers the code (sendVerificationCode, action 'register').
 * 200 `{ success: true }`
 * 400 bad_request (malformed body) · 400 invalid_email · 400 password_policy (lists every
 * violation) · 400 user_exists · 403 cross_origin_request (cross-site) · 429 rate_limited (Retry-After)
 * 500 send_failed (delivery failed; no usable code is left)
 */
import { register } from '../password-flows'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => register(ctx, event))
