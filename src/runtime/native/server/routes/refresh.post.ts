import { refreshSession } from '../../../server/lib/core/grants'
import { refreshLifetime } from '../../../server/lib/core/records/refresh-token'
import { authError, message } from '../../../server/lib/edge/errors'
import { guarded } from '../../../server/lib/edge/route-contract'
import { defineAuthRoute } from '../../../server/utils/auth-context'
import { NATIVE_ROUTES } from '../native-routes'

/** The cookie's rotation with the refresh token in the body: the same successor within the grace period, reuse after it ends the session. */
export default defineAuthRoute(guarded(NATIVE_ROUTES.refresh, async (ctx, event, { refreshToken }) => {
  if (!ctx.options.tokenRefresh.enabled) throw authError('not_found', message('token_refresh_disabled'))
  const result = await refreshSession(ctx, event, refreshToken, { channel: 'native' })
  return {
    accessToken: result.token,
    token: result.token,
    expiresIn: result.expiresIn,
    tokenType: 'Bearer' as const,
    refreshToken: result.refreshToken ?? refreshToken,
    refreshExpiresIn: Math.max(0, Math.floor(refreshLifetime(ctx, result.record))),
  }
}))
