/**
 * POST /auth/password/change (<authPath>/password/change)
 * Header `Authorization: Bearer <access token>`; body `{ currentPassword, newPassword }`.
 * Persists the new hash through onUserPersist and revokes every refresh token of the user except
 * the current session's (the token's `sid`): the user stays logged in.
 * 200 `{ success: true }`
 * 401 unauthorized · 400 current_password_incorrect · 400 password_policy · 400
 * no_password_account (no password user for the token's email) · 400 bad_request
 * 403 impersonated_session · 403 cross_origin_request (cross-site) · 429 rate_limited (Retry-After)
 */
import { change } from '../new-password'
import { defineAuthRoute } from '../../../server/utils/auth-context'
import { authenticate } from '../../../server/lib/core/authenticate'

export default defineAuthRoute(async (event, ctx) => change(ctx, event, await authenticate(event, ctx)))
