/**
 * POST /auth/passkey/login/options (<authPath>/passkey/login/options)
 * Body `{ email?: string, redirect?: string }`. The options for `navigator.credentials.get()`
 * (PublicKeyCredentialRequestOptionsJSON) with a single-use challenge (5 minutes) bound to this
 * browser (the code cookie). Without an email `allowCredentials` is empty (discoverable
 * passkeys); with one it lists that user's passkeys, or the same decoys on every request for an
 * email without any. `redirect`: same-origin path to land on after the login.
 * 400 bad_request · 400 invalid_email · 403 cross_origin_request · 429 rate_limited (Retry-After)
 * 500 passkey_not_configured
 */
import { authenticationOptions } from '../passkey-login'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => authenticationOptions(ctx, event))
