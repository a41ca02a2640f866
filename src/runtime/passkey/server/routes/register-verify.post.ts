/**
 * POST /auth/passkey/register/verify (<authPath>/passkey/register/verify)
 * Header `Authorization: Bearer <access token>`; body `{ response: RegistrationResponseJSON,
 * name?: string }`. Consumes the challenge (issued to this caller), verifies the attestation
 * for the relying party and its origins, stores the passkey through `saveCredential` and runs
 * `svc:passkey:registered`.
 * 200 `{ credential: { id, name?, deviceType, backedUp, transports?, createdAt } }`
 * 400 bad_request · 400 invalid_passkey (not signed for this site, malformed) · 400
 * invalid_passkey_challenge (unknown, expired, used, or another user's) · 400 passkey_exists ·
 * 401 unauthorized · 401 session_revoked · 403 impersonated_session · 403 cross_origin_request
 * 403 reauthentication_required (the session logged in longer ago than `sessions.recentLogin`,
 * also when the options were fetched before)
 */
import { registrationVerify } from '../passkey-registration'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => registrationVerify(ctx, event))
