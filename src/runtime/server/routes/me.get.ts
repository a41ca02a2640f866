/**
 * GET /api/user/me (endpoints.userInfoPath)
 * Header `Authorization: Bearer <access token>`. 200: the token's claims.
 * 401 unauthorized (missing, invalid or expired token) · 401 session_revoked (its session ended)
 */
import { defineAuthRoute } from '../utils/auth-context'
import { authenticate, authenticationError } from '../lib/core/authenticate'

export default defineAuthRoute(async (event, ctx) => {
  const user = await authenticate(event, ctx)
  if (!user) throw authenticationError(event, 'Missing or invalid access token')
  return user
})
