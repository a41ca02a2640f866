/**
 * POST /auth/impersonate (endpoints.impersonatePath)
 * Bearer token of the requester; body `{ targetUserId: string, reason?: string }`.
 * Order: chain check → `svc:impersonate:check` hook → canImpersonate → `svc:impersonate:fetchTarget`
 * hook → fetchTarget → records and token → `svc:impersonate:start` hook → answer (see
 * `startImpersonation`).
 * 200 `{ accessToken }` + a refresh cookie of the impersonated session (it cannot be refreshed),
 * which replaces the requester's own (that token is retired; the way back continues its session;
 * without that cookie, what the way back hands out ends with the requester's access token)
 * 400 bad_request · 401 unauthorized · 401 session_revoked (the token's session ended, or it names
 * none: the way back continues that session) · 403 impersonation_chain (already impersonating)
 * 403 forbidden (canImpersonate false) · 404 not_found (feature disabled, or target not found)
 * other statuses raised by the check hook or fetchTarget pass through (e.g. 400, 403, 429)
 */
import { impersonationRequester, startImpersonation } from '../impersonate'
import { readBodyWith } from '../../../server/lib/edge/read-body'
import { impersonateRequest as schema } from '../../../server/lib/edge/request-schemas'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(async (event, ctx) => {
  const requester = await impersonationRequester(ctx, event)
  const body = await readBodyWith(event, schema)
  return startImpersonation(ctx, event, requester, body)
})
