/**
 * POST /auth/password/reset-request (<authPath>/password/reset-request)
 * Body `{ email: string }`. After the answer, the account is looked up and, when it exists, a
 * 6-digit code (action 'reset') is stored and delivered, so neither the answer nor its timing
 * tells whether it exists.
 * 200 `{ success: true, message }` always
 * 400 invalid_email · 400 bad_request · 403 cross_origin_request (cross-site) · 429 rate_limited (Retry-After)
 */
import { resetRequest } from '../new-password'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => resetRequest(ctx, event))
