/**
 * DELETE /auth/passkey/credentials/:id (<authPath>/passkey/credentials/:id)
 * Header `Authorization: Bearer <access token>`. Deletes one of the caller's passkeys through the
 * host's `deleteCredential`, then runs `svc:passkey:deleted`.
 * 200 `{ success: true }`
 * 401 unauthorized · 401 session_revoked · 403 impersonated_session · 403 cross_origin_request ·
 * 403 reauthentication_required (the session logged in longer ago than `sessions.recentLogin`) ·
 * 404 not_found (not the caller's passkey, unknown, or no `deleteCredential` handler)
 */
import { getRouterParam } from 'h3'
import { deletePasskey } from '../manage'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => deletePasskey(ctx, event, getRouterParam(event, 'id', { decode: true })))
