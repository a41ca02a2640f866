import { setResponseHeader } from 'h3'
import { authError, message } from '../lib/edge/errors'
import { guarded } from '../lib/edge/route-contract'
import { defineAuthRoute } from '../utils/auth-context'
import { CORE_ROUTES } from '../core-routes'

export default defineAuthRoute(guarded(CORE_ROUTES.jwks, async (ctx, event) => {
  const jwks = ctx.tokens.jwks()
  if (!jwks) throw authError('not_found', message('no_public_keys'))
  setResponseHeader(event, 'cache-control', 'public, max-age=300')
  return jwks
}))
