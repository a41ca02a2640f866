import { issueDeviceCookie } from '../lib/edge/device-cookie'
import { redeemAuthCode, startSession } from '../lib/core/grants'
import { guarded } from '../lib/edge/route-contract'
import { setRefreshCookie } from '../lib/core/session-tokens'
import { defineAuthRoute } from '../utils/auth-context'
import { CORE_ROUTES } from '../core-routes'

/** A password login also sets the device cookie; a bound code presented by another browser is burnt. */
export default defineAuthRoute(guarded(CORE_ROUTES.token, async (ctx, event, { code }) => {
  const record = await redeemAuthCode(ctx, event, code, { channel: 'cookie' })
  const { token, expiresIn, refreshToken } = await startSession(ctx, event, record, 'cookie')
  if (refreshToken) setRefreshCookie(event, ctx, refreshToken)
  // The browser has completed a password login (and its second factor): a known device of the account.
  if (record.provider === 'password' && typeof record.user.email === 'string') issueDeviceCookie(event, ctx, record.user.email)
  return { token, expiresIn, accessToken: token, tokenType: 'Bearer' as const, ...(record.redirect ? { redirect: record.redirect } : {}) }
}))
