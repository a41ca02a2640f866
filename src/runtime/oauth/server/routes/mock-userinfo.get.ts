/**
 * GET /mock/userinfo (mock provider)
 * Header `Authorization: Bearer <mock access token>`.
 * 200 the mock user `{ sub, email, name, picture?, …custom keys }`
 * 401 invalid_token (missing, unknown or expired token; WWW-Authenticate: Bearer) · 404 not_found (mock off)
 */
import { mockUserinfo } from '../mock-provider'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => mockUserinfo(event, ctx))
