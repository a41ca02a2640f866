/**
 * POST /auth/unimpersonate (endpoints.unimpersonatePath)
 * Bearer: the impersonated access token; the refresh cookie of the impersonated session must come
 * with it (the way back is bound to the browser that started the impersonation). The server-side
 * impersonation record is consumed atomically, the original user is looked up again
 * (`impersonation.fetchTarget(originalUserLookupId)`) and restored with `originalClaims`; the
 * `svc:impersonate:end` hook runs before anything is handed out (if it fails, nothing changes).
 * 200 `{ accessToken }` + a new refresh cookie for the original user
 * 400 not_impersonating (a normal token) · 401 unauthorized (missing, invalid or expired token)
 * 401 impersonation_ended (already ended or expired) · 403 impersonation_session_mismatch (no or
 * another session's refresh cookie) · 404 not_found (feature disabled, or original user gone)
 * 403 cross_origin_request · 413 payload_too_large
 */
import { buildAccessClaims } from '../lib/claims'
import { authError } from '../lib/errors'
import { getAuthHandlers } from '../lib/handlers'
import { customClaimsOf, identityOf, requestOrigin } from '../lib/impersonation'
import { saveImpersonation, takeImpersonation } from '../lib/records/impersonation'
import { issueRefreshToken, readRefreshToken, revokeFamily } from '../lib/records/refresh-token'
import { refuseCrossOrigin } from '../lib/request-guards'
import { readRefreshCookie, setRefreshCookie } from '../lib/session'
import { describeClient } from '../lib/sessions'
import { defineAuthRoute } from '../utils/context'
import { authenticate, authenticationError } from '../lib/authenticate'

export default defineAuthRoute(async (event, ctx) => {
  refuseCrossOrigin(event, ctx)
  if (!ctx.options.impersonation.enabled) throw authError(404, 'not_found', 'Impersonation is disabled')
  const impersonated = await authenticate(event, ctx)
  if (!impersonated) throw authenticationError(event, 'Missing, invalid or expired access token')
  const context = impersonated.impersonation
  if (!context || typeof impersonated.sid !== 'string') throw authError(400, 'not_impersonating', 'Not currently impersonating')

  const cookie = readRefreshCookie(event, ctx)
  const session = cookie ? await readRefreshToken(ctx, cookie) : null
  if (!session || !session.record.impersonation || session.record.family !== impersonated.sid) {
    throw authError(403, 'impersonation_session_mismatch', 'This impersonation was not started in this browser')
  }
  const record = await takeImpersonation(ctx, impersonated.sid)
  if (!record) throw authError(401, 'impersonation_ended', 'The impersonation has already ended')

  try {
    const fetchTarget = getAuthHandlers().impersonation?.fetchTarget
    if (!fetchTarget) throw new Error('impersonation.fetchTarget is not registered (defineAuthHandlers)')
    const original = await fetchTarget(record.context.originalUserLookupId, event)
    const identity = original ? identityOf(original) : undefined
    if (!original || !identity?.sub) throw authError(404, 'not_found', 'Original user not found')

    const claims = { ...customClaimsOf(original), ...(record.context.originalClaims ?? {}) }
    const fresh = await issueRefreshToken(ctx, { user: { ...original, ...identity }, userId: identity.sub, claims, provider: identity.provider, client: describeClient(event, ctx) })
    const payload = buildAccessClaims(identity, identity.provider, claims, { sid: fresh.record.family })
    const { token, payload: restoredUser } = await ctx.tokens.sign(payload)
    const { ip, userAgent } = requestOrigin(event, ctx)
    try {
      await ctx.callHook('svc:impersonate:end', { restoredUser, impersonatedUser: impersonated, event, ip, userAgent, timestamp: new Date() })
    }
    catch (error) {
      await revokeFamily(ctx, fresh.record.family, identity.sub, 'impersonation')
      throw error
    }
    await revokeFamily(ctx, session.record.family, session.record.userId, 'impersonation')
    setRefreshCookie(event, ctx, fresh.token)
    ctx.logger.security('impersonation_ended', { requester: identity.sub, target: impersonated.sub, ip })
    return { accessToken: token }
  }
  catch (error) {
    // Nothing was handed out: the impersonation stays as it was and can be ended again.
    await saveImpersonation(ctx, record)
    throw error
  }
})
