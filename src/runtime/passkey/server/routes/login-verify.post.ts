/**
 * POST /auth/passkey/login/verify (<authPath>/passkey/login/verify)
 * Body `{ response: AuthenticationResponseJSON }`. Consumes the challenge (this browser's only),
 * verifies the assertion with the stored public key, refuses a counter that went backwards,
 * saves the new counter and completes the login (provider `passkey`; `multiFactor` when the
 * authenticator verified the user).
 * 200 `{ redirect }`: where the browser goes next (the callback page with a code bound to it)
 * 400 bad_request · 400 invalid_passkey (unknown credential, bad signature, wrong origin or
 * rpID) · 400 invalid_passkey_challenge (unknown, expired, used, or another browser's) · 401
 * passkey_counter_regressed · 403 cross_origin_request · 429 rate_limited (Retry-After)
 */
import { authenticationVerify } from '../passkey-login'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => authenticationVerify(ctx, event))
