/**
 * POST /auth/passkey/register/options (<authPath>/passkey/register/options)
 * Header `Authorization: Bearer <access token>`, no body. The options for
 * `navigator.credentials.create()` (PublicKeyCredentialCreationOptionsJSON) with a single-use
 * challenge (5 minutes) bound to the caller; `excludeCredentials` lists their passkeys.
 * 401 unauthorized · 401 session_revoked · 403 impersonated_session · 403 cross_origin_request
 * 403 reauthentication_required (the session logged in longer ago than `sessions.recentLogin`)
 * 500 passkey_not_configured (no `publicUrl` or `origins`, outside development on localhost)
 */
import { registrationOptions } from '../passkey-registration'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => registrationOptions(ctx, event))
