/**
 * POST /auth/unimpersonate (endpoints.unimpersonatePath)
 * Bearer: the impersonated access token; the refresh cookie of the impersonated session must come
 * with it (the way back is bound to the browser that started the impersonation). The server-side
 * impersonation record is consumed atomically, the original user is looked up again
 * (`impersonation.fetchTarget(originalUserLookupId)`) and restored with `originalClaims`; the
 * `svc:impersonate:end` hook runs before anything is handed out (if it fails, nothing changes;
 * see `endImpersonation`).
 * 200 `{ accessToken }` + a new refresh cookie of the requester's own session (the one their token
 * belonged to, with its login time; for an impersonation started with the bearer alone, it ends
 * when the requester's access token does)
 * 400 not_impersonating (a normal token) · 401 unauthorized (missing, invalid or expired token)
 * 401 impersonation_ended (already ended or expired) · 401 session_revoked (the requester's own
 * session ended meanwhile: the way back continues it, it never creates one)
 * 403 impersonation_session_mismatch (no or another session's refresh cookie) · 404 not_found (feature disabled, or original user gone)
 * 403 cross_origin_request · 413 payload_too_large
 */
import { endImpersonation } from '../impersonate'
import { refuseCrossOrigin } from '../../../server/lib/edge/request-guards'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(async (event, ctx) => {
  refuseCrossOrigin(event, ctx)
  return endImpersonation(ctx, event)
})
