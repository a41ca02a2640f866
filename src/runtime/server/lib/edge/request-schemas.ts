/** The zod schemas of the routes' bodies, queries and path parameters, also for OpenAPI (the build imports this file). */
import { z } from 'zod'
import { MAP_FIELD } from '../store/types'
import { isSafeRedirect } from './redirect'

/** Longest address accepted (RFC 5321 path limit), measured in its ASCII (punycode) form. */
export const MAX_EMAIL_LENGTH = 254

/** Longest password accepted in a body (bcrypt checks 72 bytes; this bounds the work of others). */
export const MAX_PASSWORD_LENGTH = 1024

/** An email as a body or query carries it (checked further by `requireEmail`). */
export const emailField = z.string().max(MAX_EMAIL_LENGTH + 64)
/** A password as a body carries it. */
export const passwordField = z.string().max(MAX_PASSWORD_LENGTH)

/** POST /auth/token. */
export const tokenRequest = z.object({ code: z.string().min(1).max(512) })

/** POST /auth/impersonate. */
export const impersonateRequest = z.object({
  targetUserId: z.string().trim().min(1).max(256),
  reason: z.string().trim().max(500).optional(),
})

/** POST /auth/logout (no body: the local logout alone). */
export const logoutRequest = z.object({
  /** Also end the session at the OpenID provider it came from: the answer's `redirect` is its end-session URL. */
  provider: z.boolean().optional(),
  /** One of the provider's `postLogoutRedirectUrls` to come back to (the first when absent). */
  postLogoutRedirectUri: z.string().max(2048).optional(),
})

/** POST <authPath>/backchannel-logout/<provider> (form body of OpenID Connect Back-Channel Logout). */
export const backchannelLogoutRequest = z.object({ logout_token: z.string().min(1).max(16 * 1024) })

/** A session id (token family) as it may appear in a user's map; anything else names no session. */
export const sessionIdSchema = z.string().regex(MAP_FIELD)

/** POST <authPath>/magic-link: the address, and the page to land on after the login. */
export const magicLinkRequest = z.object({ email: emailField, redirect: z.string().max(2048).optional() })

/** POST <authPath>/magic-link/redeem: the link's token, and `thisDevice` to log in the browser that opened it. */
export const magicLinkRedeemRequest = z.object({ token: z.string().min(1).max(128), thisDevice: z.boolean().optional() })

/** POST <authPath>/magic-link/code: the short code shown where the link was opened, typed where it was asked for. */
export const magicLinkCodeRequest = z.object({ email: emailField, code: z.string().max(64) })

/** POST password register and login. */
export const credentialsRequest = z.object({ email: emailField, password: passwordField })
/** POST password reset-request. */
export const resetRequestRequest = z.object({ email: emailField })
/** POST password reset-complete. */
export const resetCompleteRequest = z.object({ sessionId: z.string().min(1).max(512), newPassword: passwordField })
/** POST password change. */
export const changePasswordRequest = z.object({ currentPassword: passwordField, newPassword: passwordField })
/** Body of POST verify (JSON or form) and query of GET verify. */
export const verifyRequest = z.object({ code: z.string().max(64), email: emailField.optional(), flow: z.string().max(64).optional() })

const text = (max: number) => z.string().max(max)

/** Query of GET /mock/authorize. */
export const mockAuthorizeRequest = z.object({
  response_type: text(64).optional(),
  client_id: text(256),
  redirect_uri: text(2048),
  state: text(512).optional(),
  scope: text(1024).optional(),
  code_challenge: text(128).optional(),
  code_challenge_method: text(16).optional(),
  login_hint: text(320).optional(),
  mock_error: text(64).optional(),
})

/** Form body of POST /mock/token. */
export const mockTokenRequest = z.object({
  grant_type: text(64),
  code: text(256),
  redirect_uri: text(2048),
  code_verifier: text(128),
  client_id: text(256).optional(),
  client_secret: text(256).optional(),
})

/** A pending second-factor login's flow id (the `flow` of the second-factor page). */
const twoFactorFlow = z.string().min(1).max(64)
/** A TOTP code as typed (checked further: digits only, the enrolment's length). */
const totpCode = z.string().max(16)
/** A recovery code as typed (`xxxxx-xxxxx`; case, spaces and dashes are ignored). */
const recoveryCode = z.string().max(64)
const exactlyOne = (keys: readonly string[]) => (body: Record<string, unknown>) => keys.filter(key => body[key] !== undefined).length === 1

/** POST two-factor verify. */
export const twoFactorVerifyRequest = z.object({ flow: twoFactorFlow, code: totpCode.optional(), recoveryCode: recoveryCode.optional() })
  .refine(exactlyOne(['code', 'recoveryCode']), 'give either code or recoveryCode')
/** POST two-factor login-enrol. */
export const twoFactorFlowRequest = z.object({ flow: twoFactorFlow })
/** POST two-factor login-confirm. */
export const twoFactorConfirmLoginRequest = z.object({ flow: twoFactorFlow, code: totpCode })
/** POST two-factor confirm and recovery-codes. */
export const twoFactorCodeRequest = z.object({ code: totpCode })
/** POST two-factor disable: the account's password, a TOTP code or a recovery code. */
export const twoFactorDisableRequest = z.object({ password: passwordField.optional(), code: totpCode.optional(), recoveryCode: recoveryCode.optional() })
  .refine(exactlyOne(['password', 'code', 'recoveryCode']), 'give one of password, code or recoveryCode')
/** Base64url text (no padding) of at most `max` characters. */
const base64url = (max: number) => z.string().max(max).regex(/^[\w-]*$/, 'must be base64url')

/** Longest credential id accepted: 1023 bytes (WebAuthn's limit) in base64url. */
export const MAX_PASSKEY_ID_LENGTH = 1364

/** A passkey's credential id (base64url), in a body or as the `:id` of a path. */
export const passkeyIdSchema = base64url(MAX_PASSKEY_ID_LENGTH).min(1)

/** Fields every WebAuthn answer of a browser carries (`PublicKeyCredential.toJSON()`). */
const credentialFields = {
  id: passkeyIdSchema,
  rawId: passkeyIdSchema,
  type: z.literal('public-key'),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
  clientExtensionResults: z.record(z.string().max(64), z.unknown()).default({}),
}

/** RegistrationResponseJSON of `navigator.credentials.create()` (attestation up to 12 KB). */
export const passkeyRegistrationResponse = z.object({
  ...credentialFields,
  response: z.object({
    clientDataJSON: base64url(4096).min(1),
    attestationObject: base64url(12_288).min(1),
    authenticatorData: base64url(4096).optional(),
    transports: z.array(z.string().max(32)).max(16).optional(),
    publicKeyAlgorithm: z.number().optional(),
    publicKey: base64url(4096).optional(),
  }),
})

/** AuthenticationResponseJSON of `navigator.credentials.get()`. */
export const passkeyAuthenticationResponse = z.object({
  ...credentialFields,
  response: z.object({
    clientDataJSON: base64url(4096).min(1),
    authenticatorData: base64url(4096).min(1),
    signature: base64url(2048).min(1),
    userHandle: base64url(128).optional(),
  }),
})

/** POST passkey register/verify: the browser's answer and an optional name for the passkey. */
export const passkeyRegisterVerifyRequest = z.object({ response: passkeyRegistrationResponse, name: z.string().max(256).optional() })
/** POST passkey login/options: an optional email hint and the path to land on after the login. */
export const passkeyLoginOptionsRequest = z.object({ email: emailField.optional(), redirect: z.string().max(2048).optional() })
/** POST passkey login/verify: the browser's answer. */
export const passkeyLoginVerifyRequest = z.object({ response: passkeyAuthenticationResponse })

/** POST `<authPath>/orgs/active`: an organization id (checked against the caller's memberships), or null for none. */
export const activeOrganizationRequest = z.object({ orgId: z.string().max(64).nullable() })

/** POST <authPath>/link/:provider: the same-origin path to return to (`?linked=` or `?error=`). */
export const linkRequest = z.object({ redirect: z.string().max(1024).refine(isSafeRedirect, 'redirect must be a path of this site').optional() })
