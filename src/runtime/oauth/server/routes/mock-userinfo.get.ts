import { mockUserinfo } from '../mock-provider'
import { guarded } from '../../../server/lib/edge/route-contract'
import { defineAuthRoute } from '../../../server/utils/auth-context'
import { OAUTH_ROUTES } from '../oauth-routes'

export default defineAuthRoute(guarded(OAUTH_ROUTES.mockUserinfo, (ctx, event) => mockUserinfo(event, ctx)))
