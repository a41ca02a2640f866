import { matchesCodeBinding } from '../lib/core/code-binding'
import { issueDeviceCookie } from '../lib/edge/device-cookie'
import { authError } from '../lib/edge/errors'
import { consumeAuthCode } from '../lib/core/records/auth-code'
import { issueRefreshToken } from '../lib/core/records/refresh-token'
import { refusalWindow, securityEvent } from '../lib/edge/security-event'
import { subjectOf } from '../lib/core/subject'
import { guarded } from '../lib/edge/route-contract'
import { mintSessionToken, setRefreshCookie } from '../lib/core/session-tokens'
import { describeClient } from '../lib/edge/client-description'
import { defineAuthRoute } from '../utils/auth-context'
import { CORE_ROUTES } from '../core-routes'
import { randomToken } from '../lib/store/crypto'
import { indexUpstreamLogin } from '../lib/core/records/upstream-login'

/** A password login also sets the device cookie; a bound code presented by another browser is burnt. */
export default defineAuthRoute(guarded(CORE_ROUTES.token, async (ctx, event, { code }) => {
  // Taken before any other check: a code presented once is used up, whatever the outcome.
  const record = await consumeAuthCode(ctx, code)
  const userId = record ? subjectOf(record.user) : undefined
  if (!record || !userId) {
    // Anyone can send made-up codes, and this route has no rate limit: one event per client each 5 minutes.
    await securityEvent(ctx, event, { type: 'code.refused', outcome: 'failure', details: { reason: 'unknown' }, aggregate: refusalWindow(ctx, event, 'unknown') })
    throw authError('invalid_code')
  }
  if (record.binding !== undefined && !matchesCodeBinding(event, ctx, record.binding)) {
    await securityEvent(ctx, event, { type: 'code.refused', outcome: 'failure', actor: null, subject: userId, details: { reason: 'other_browser', provider: record.provider } })
    throw authError('code_binding_mismatch')
  }
  const session = { user: record.user, userId, provider: record.provider, family: randomToken(16), impersonation: undefined }
  // Indexed before the session exists: the provider's back-channel logout can name it from now on.
  const upstream = record.upstream ? await indexUpstreamLogin(ctx, session, record.upstream) : undefined
  if (ctx.options.tokenRefresh.enabled) {
    const issued = await issueRefreshToken(ctx, { ...session, claims: record.claims, client: describeClient(event, ctx), upstream })
    session.family = issued.record.family
    setRefreshCookie(event, ctx, issued.token)
  }
  const { token, expiresIn } = await mintSessionToken(ctx, session, record.claims)
  await securityEvent(ctx, event, { type: 'login', actor: userId, session: session.family, details: { provider: record.provider, secondFactor: record.secondFactor } })
  // The browser has completed a password login (and its second factor): a known device of the account.
  if (record.provider === 'password' && typeof record.user.email === 'string') issueDeviceCookie(event, ctx, record.user.email)
  return { token, expiresIn, accessToken: token, tokenType: 'Bearer' as const, ...(record.redirect ? { redirect: record.redirect } : {}) }
}))
