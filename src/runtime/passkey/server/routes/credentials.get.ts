/**
 * GET /auth/passkey/credentials (<authPath>/passkey/credentials)
 * Header `Authorization: Bearer <access token>`. The caller's passkeys, newest first:
 * `{ credentials: [{ id, name?, deviceType, backedUp, transports?, createdAt, lastUsedAt? }] }`
 * (no public keys, no counters).
 * 401 unauthorized · 401 session_revoked · 403 impersonated_session
 */
import { listPasskeys } from '../manage'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => listPasskeys(ctx, event))
