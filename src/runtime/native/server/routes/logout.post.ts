import { revokeRefreshToken } from '../../../server/lib/core/records/refresh-token'
import { guarded } from '../../../server/lib/edge/route-contract'
import { defineAuthRoute } from '../../../server/utils/auth-context'
import { NATIVE_ROUTES } from '../native-routes'

/** Any token of a native session ends it, one rotated since too; a browser session's token ends nothing. */
export default defineAuthRoute(guarded(NATIVE_ROUTES.logout, async (ctx, event, { refreshToken }) => {
  await revokeRefreshToken(ctx, refreshToken, event, 'native')
  return { success: true as const }
}))
