/**
 * GET /auth/password/register-verify?code=<6 digits>[&email=] (the link of the message)
 * POST /auth/password/register-verify, JSON or form body `{ code: string, email?: string }`
 * Creates the account (onUserPersist with email and hashedPassword), resolves claims, emits
 * svc:success and issues an authorization code.
 * 302 to `<callbackPath>?code=<code>`; a POST with `Accept: application/json` gets 200
 * `{ success: true, redirect }` instead.
 * 400 invalid_verification_code (wrong, expired or used) · 400 too_many_attempts · 400 user_exists
 * 400 bad_request · 403 cross_origin_request (cross-site POST) · 429 rate_limited (Retry-After)
 */
import { registerVerify } from '../password-flows'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => registerVerify(ctx, event))
