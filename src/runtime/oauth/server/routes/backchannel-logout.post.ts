import { getRequestHeader, getRouterParam, readBody } from 'h3'
import { guarded } from '../../../server/lib/edge/route-contract'
import { authError, message } from '../../../server/lib/edge/errors'
import { limitRequestBody } from '../../../server/lib/edge/request-guards'
import { backchannelLogoutRequest } from '../../../server/lib/edge/request-schemas'
import { defineAuthRoute } from '../../../server/utils/auth-context'
import { backchannelLogout, BACKCHANNEL_MAX_BODY } from '../backchannel-logout'
import { OAUTH_ROUTES } from '../oauth-routes'

/** A server-to-server POST from the provider (no Origin, no cookie): only the logout token's signature counts. */
export default defineAuthRoute(guarded(OAUTH_ROUTES.backchannelLogout, async (ctx, event) => {
  await limitRequestBody(event, Math.min(BACKCHANNEL_MAX_BODY, ctx.options.security.maxBodySize))
  const type = getRequestHeader(event, 'content-type') ?? ''
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) throw authError('invalid_request', message('form_body_required'))
  const parsed = backchannelLogoutRequest.safeParse(await readBody(event).catch(() => undefined))
  if (!parsed.success) throw authError('invalid_request', message('logout_token_required'))
  await backchannelLogout(ctx, event, getRouterParam(event, 'provider') ?? '', parsed.data.logout_token)
  return { success: true as const }
}))
