/**
 * GET /auth/two-factor/status (<authPath>/two-factor/status)
 * Header `Authorization: Bearer <access token>`. The caller's second factor.
 * 200 `{ enabled, recoveryCodesLeft }`
 * 401 unauthorized · 401 session_revoked · 403 impersonated_session
 */
import { twoFactorStatus } from '../settings'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => twoFactorStatus(ctx, event))
