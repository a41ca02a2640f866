/** The zod schemas of the routes' JSON answers: the OpenAPI description and the tests use them (the build imports this file). */
import { z } from 'zod'

/** Whole seconds or a count: never negative (the build's literal reader drops negative numbers). */
const count = z.number().int().nonnegative()

/** A signed JWT. */
const jwt = z.string().min(1).describe('Signed JWT access token')

/** `{ success: true }`. */
export const successResponse = z.strictObject({ success: z.literal(true) })

/** POST /auth/logout. */
export const logoutResponse = z.strictObject({
  success: z.literal(true),
  redirect: z.string().optional().describe('With `{ provider: true }`: the provider\'s end-session URL to send the browser to'),
})

/** POST /auth/token. */
export const tokenResponse = z.strictObject({
  token: jwt,
  accessToken: jwt,
  expiresIn: count.describe('Lifetime of the access token in seconds'),
  tokenType: z.literal('Bearer'),
  redirect: z.string().optional().describe('Same-origin path the login asked to land on'),
})

/** POST /auth/refresh. */
export const refreshResponse = z.strictObject({
  success: z.literal(true),
  message: z.string(),
  token: jwt,
  accessToken: jwt,
  expiresIn: count.describe('Lifetime of the access token in seconds'),
})

/** POST `<authPath>/orgs/active`: an access token with the new organization's claims. */
export const activeOrganizationResponse = z.strictObject({
  accessToken: jwt,
  tokenType: z.literal('Bearer'),
  expiresIn: count.describe('Lifetime of the access token in seconds'),
})

/** POST /auth/impersonate and /auth/unimpersonate. */
export const accessTokenResponse = z.strictObject({ accessToken: jwt })

/** The `impersonation` claim of an impersonated token. */
const impersonationClaim = z.looseObject({
  originalUserSub: z.string(),
  originalUserLookupId: z.string(),
  originalUserEmail: z.string().optional(),
  originalUserName: z.string().optional(),
  impersonatedAt: z.string(),
  reason: z.string().optional(),
})

/** GET /api/user/me: the access token's claims (custom claims included). */
export const claimsResponse = z.looseObject({
  sub: z.string().min(1),
  email: z.string().optional(),
  name: z.string().optional(),
  picture: z.string().optional(),
  provider: z.string().optional(),
  iss: z.string().optional(),
  aud: z.union([z.string(), z.array(z.string())]).optional(),
  iat: count.optional(),
  exp: count.optional(),
  sid: z.string().optional().describe('Session (refresh token family) of the token'),
  impersonation: impersonationClaim.optional(),
})

/** GET /.well-known/jwks.json: the RS256 public keys. */
export const jwksResponse = z.strictObject({
  keys: z.array(z.looseObject({
    kty: z.literal('RSA'),
    n: z.string(),
    e: z.string(),
    kid: z.string().optional(),
    alg: z.literal('RS256').optional(),
    use: z.literal('sig').optional(),
  })),
})

/** One entry of GET /auth/sessions. */
export const sessionResponse = z.strictObject({
  id: z.string(),
  current: z.boolean(),
  createdAt: z.iso.datetime(),
  lastUsedAt: z.iso.datetime(),
  provider: z.string().optional(),
  client: z.strictObject({
    userAgent: z.string().optional().describe('Browser and system family, no versions'),
    address: z.string().optional().describe('Network prefix of the address (/24 or /48)'),
  }),
})

/** GET /auth/sessions. */
export const sessionsResponse = z.strictObject({ sessions: z.array(sessionResponse) })

/** POST /auth/sessions/revoke-others. */
export const revokeOthersResponse = z.strictObject({ success: z.literal(true), revoked: count })

/** POST password reset-request (the same answer whether the account exists or not). */
export const messageResponse = z.strictObject({ success: z.literal(true), message: z.string() })

/** POST password register-verify and login-verify with `Accept: application/json`. */
export const redirectResponse = z.strictObject({ success: z.literal(true), redirect: z.string() })

/** The page of a magic link: the login's next page, or (opened on another device) the short code to type where it was asked for. */
export const magicLinkRedeemResponse = z.union([redirectResponse, z.strictObject({ success: z.literal(true), code: z.string(), email: z.string().describe('The address of the account the link logs in') })])

/** POST password reset-verify with `Accept: application/json`. */
export const resetSessionResponse = z.strictObject({ success: z.literal(true), redirect: z.string(), sessionId: z.string() })

/** POST two-factor enrol and login-enrol: shown once. */
export const twoFactorEnrolmentResponse = z.strictObject({
  uri: z.string().describe('otpauth:// URI for the QR code of authenticator apps'),
  secret: z.string().describe('The TOTP secret in base32, for typing into the app'),
})

/** POST two-factor confirm and recovery-codes: shown once. */
export const recoveryCodesResponse = z.strictObject({ recoveryCodes: z.array(z.string()) })

/** GET two-factor status. */
export const twoFactorStatusResponse = z.strictObject({ enabled: z.boolean(), recoveryCodesLeft: count })

/** POST two-factor login-confirm: the callback page with the code, and the recovery codes (shown once). */
export const loginEnrolledResponse = z.strictObject({ success: z.literal(true), redirect: z.string(), recoveryCodes: z.array(z.string()) })

/** POST /mock/token. */
export const mockTokenResponse = z.strictObject({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: count,
  scope: z.string(),
})

/** GET /mock/userinfo: the mock user with all its keys. */
export const mockUserResponse = z.looseObject({ sub: z.string() })

/** Body of every error answer; `error` is one of the stable codes of `ERRORS`. */
export const errorResponse = z.strictObject({
  statusCode: z.number().int().min(400).max(599),
  message: z.string(),
  error: z.string(),
})

/** A passkey in the user's list (no public key, no counter). */
export const passkeyInfoResponse = z.strictObject({
  id: z.string().describe('Credential id (base64url)'),
  name: z.string().optional(),
  deviceType: z.enum(['singleDevice', 'multiDevice']).describe('multiDevice: a synced passkey'),
  backedUp: z.boolean(),
  transports: z.array(z.string()).optional(),
  createdAt: z.iso.datetime(),
  lastUsedAt: z.iso.datetime().optional(),
})

/** GET passkey credentials. */
export const passkeyListResponse = z.strictObject({ credentials: z.array(passkeyInfoResponse) })

/** POST passkey register/verify. */
export const passkeyRegisteredResponse = z.strictObject({ credential: passkeyInfoResponse })

/** A credential descriptor of the options (`excludeCredentials`, `allowCredentials`). */
const credentialDescriptor = z.looseObject({ id: z.string(), type: z.literal('public-key'), transports: z.array(z.string()).optional() })

/** POST passkey register/options: PublicKeyCredentialCreationOptionsJSON for `navigator.credentials.create()`. */
export const passkeyCreationOptionsResponse = z.looseObject({
  challenge: z.string(),
  rp: z.looseObject({ id: z.string().optional(), name: z.string() }),
  user: z.looseObject({ id: z.string(), name: z.string(), displayName: z.string() }),
  pubKeyCredParams: z.array(z.looseObject({ alg: z.number(), type: z.literal('public-key') })),
  timeout: z.number().optional(),
  excludeCredentials: z.array(credentialDescriptor).optional(),
  authenticatorSelection: z.looseObject({}).optional(),
  attestation: z.string().optional(),
})

/** POST passkey login/options: PublicKeyCredentialRequestOptionsJSON for `navigator.credentials.get()`. */
export const passkeyRequestOptionsResponse = z.looseObject({
  challenge: z.string(),
  rpId: z.string().optional(),
  timeout: z.number().optional(),
  allowCredentials: z.array(credentialDescriptor).optional(),
  userVerification: z.string().optional(),
})

/** POST passkey login/verify: where the browser goes next (the callback page with a code). */
export const passkeyLoginResponse = z.strictObject({ redirect: z.string() })

/** POST <authPath>/link/:provider. */
export const linkStartResponse = z.strictObject({ redirect: z.string().describe('The provider\'s authorization URL: send the browser there') })

/** GET <authPath>/links: the caller's linked identities and their other ways to log in. */
export const linkedAccountsResponse = z.strictObject({
  links: z.array(z.strictObject({ provider: z.string(), email: z.string().optional(), linkedAt: z.string() })),
  password: z.boolean().describe('The account has a password'),
  magicLink: z.boolean().describe('A magic link logs into the account'),
  passkeys: z.number().int().min(0).describe('How many passkeys the account has'),
})
