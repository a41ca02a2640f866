/**
 * GET /mock/authorize (mock provider; development, or production with enableInProduction)
 * Query: response_type=code, client_id, redirect_uri (same origin), state, scope, code_challenge,
 * code_challenge_method=S256, login_hint (user index, sub or email), mock_error (simulated error).
 * 302 to `redirect_uri?code=<60 s code>&state=…`, or `redirect_uri?error=…&error_description=…&state=…`.
 * 400 invalid_request (missing client_id/redirect_uri, unknown client_id, foreign redirect_uri)
 * 404 not_found (mock provider off)
 */
import { mockAuthorize } from '../mock-provider'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => mockAuthorize(event, ctx))
