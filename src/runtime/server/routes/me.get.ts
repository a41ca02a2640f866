import { message } from '../lib/edge/errors'
import { guarded } from '../lib/edge/route-contract'
import { defineAuthRoute } from '../utils/auth-context'
import { authenticate, authenticationError } from '../lib/core/authenticate'
import { CORE_ROUTES } from '../core-routes'

export default defineAuthRoute(guarded(CORE_ROUTES.me, async (ctx, event) => {
  const user = await authenticate(event, ctx)
  if (!user) throw authenticationError(event, message('missing_access_token'))
  return user
}))
