/**
 * GET /.well-known/jwks.json (endpoints.jwksPath)
 * 200 `{ keys: [...] }`: the RS256 public key, for services that verify access tokens.
 * 404 not_found with HS256 (a shared secret is never published)
 */
import { setResponseHeader } from 'h3'
import { authError } from '../lib/edge/errors'
import { defineAuthRoute } from '../utils/auth-context'

export default defineAuthRoute(async (event, ctx) => {
  const jwks = ctx.tokens.jwks()
  if (!jwks) throw authError('not_found', 'No public keys: tokens are signed with HS256')
  setResponseHeader(event, 'cache-control', 'public, max-age=300')
  return jwks
})
