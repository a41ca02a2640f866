/**
 * GET /auth/password/reset-verify?code=<6 digits>[&email=] (the link of the message)
 * POST /auth/password/reset-verify, JSON or form body `{ code: string, email?: string }`
 * Creates a single-use reset session of 5 minutes.
 * 302 to `<resetPasswordPath>?session=<sessionId>` (default /reset-password); a POST with
 * `Accept: application/json` gets 200 `{ success: true, redirect, sessionId }` instead.
 * 400 invalid_verification_code (wrong, expired or used) · 400 too_many_attempts · 400 bad_request
 * 403 cross_origin_request (cross-site POST) · 429 rate_limited (Retry-After)
 */
import { resetVerify } from '../new-password'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => resetVerify(ctx, event))
