import { mockToken } from '../mock-provider'
import { guarded } from '../../../server/lib/edge/route-contract'
import { defineAuthRoute } from '../../../server/utils/auth-context'
import { OAUTH_ROUTES } from '../oauth-routes'

export default defineAuthRoute(guarded(OAUTH_ROUTES.mockToken, (ctx, event) => mockToken(event, ctx)))
