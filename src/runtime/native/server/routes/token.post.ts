import { redeemAuthCode, startSession } from '../../../server/lib/core/grants'
import { authError, message } from '../../../server/lib/edge/errors'
import { guarded } from '../../../server/lib/edge/route-contract'
import { defineAuthRoute } from '../../../server/utils/auth-context'
import { NATIVE_ROUTES } from '../native-routes'

/** A native login's code for an access token and a refresh token, both in the answer (the code's PKCE verifier proves its holder). */
export default defineAuthRoute(guarded(NATIVE_ROUTES.token, async (ctx, event, { code, codeVerifier }) => {
  if (!ctx.options.tokenRefresh.enabled) throw authError('not_found', message('token_refresh_disabled'))
  const record = await redeemAuthCode(ctx, event, code, { channel: 'native', codeVerifier })
  const { token, expiresIn, refreshToken } = await startSession(ctx, event, record, 'native')
  return { accessToken: token, token, expiresIn, tokenType: 'Bearer' as const, refreshToken: refreshToken!, refreshExpiresIn: Math.floor(ctx.lifetimes.refresh) }
}))
