import { mockAuthorize } from '../mock-provider'
import { guarded } from '../../../server/lib/edge/route-contract'
import { defineAuthRoute } from '../../../server/utils/auth-context'
import { OAUTH_ROUTES } from '../oauth-routes'

export default defineAuthRoute(guarded(OAUTH_ROUTES.mockAuthorize, (ctx, event) => mockAuthorize(event, ctx)))
