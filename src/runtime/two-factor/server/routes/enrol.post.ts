/**
 * POST /auth/two-factor/enrol (<authPath>/two-factor/enrol)
 * Header `Authorization: Bearer <access token>`, no body. Starts an enrolment: a new TOTP secret,
 * kept (encrypted) as a pending enrolment for `twoFactor.enrolmentTTL` seconds until a code
 * confirms it; starting again replaces it. Nothing is saved with the host yet.
 * 200 `{ uri, secret }` (the `otpauth://` URI for the QR code and the base32 secret; shown once)
 * 401 unauthorized · 401 session_revoked · 403 impersonated_session · 403 cross_origin_request
 * 403 reauthentication_required (the session logged in longer ago than `sessions.recentLogin`)
 * 409 two_factor_already_enabled (disable it first)
 */
import { startEnrolment } from '../settings'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute((event, ctx) => startEnrolment(ctx, event))
