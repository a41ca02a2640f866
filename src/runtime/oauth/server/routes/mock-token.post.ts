/**
 * POST /mock/token (mock provider)
 * Body (application/x-www-form-urlencoded): grant_type=authorization_code, code, redirect_uri,
 * code_verifier; client by HTTP Basic or client_id/client_secret in the body.
 * 200 `{ access_token, token_type: 'Bearer', expires_in: 3600, scope }`
 * 400 invalid_request · 400 unsupported_grant_type · 400 invalid_grant (unknown, used or expired
 * code, other client or redirect_uri, PKCE mismatch) · 401 invalid_client · 404 not_found (mock off)
 */
import { mockToken } from '../mock-provider'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => mockToken(event, ctx))
