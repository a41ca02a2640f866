/**
 * GET /api/user/me (endpoints.userInfoPath)
 * Header `Authorization: Bearer <access token>`. 200: the token's claims.
 * 401 unauthorized (missing, invalid or expired token)
 */
import { authError } from '../lib/errors'
import { defineAuthRoute } from '../utils/context'
import { authenticate } from '../utils/user'

export default defineAuthRoute(async (event, ctx) => {
  const user = await authenticate(event, ctx)
  if (!user) throw authError(401, 'unauthorized', 'Missing or invalid access token')
  return user
})
