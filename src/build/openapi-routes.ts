import type { z } from 'zod'
import type { AuthErrorCode } from '../runtime/server/lib/edge/errors'
import * as req from '../runtime/server/lib/edge/request-schemas'
import * as res from '../runtime/server/lib/edge/response-schemas'

/** How a call of a route authenticates. */
export type RouteAuth = 'bearer' | 'refreshCookie' | 'bearerAndRefreshCookie'

/** The OpenAPI description of one module route (one method of one handler file). */
export interface RouteDoc {
  /** Operation id without the `svcAuth` prefix (PascalCase). */
  id: string
  summary: string
  description: string
  auth?: RouteAuth
  /** Request body, read as JSON (and as a form where `form` says so). */
  body?: z.ZodType
  /** Media types of the body. @default ['json'] */
  bodyTypes?: Array<'json' | 'form'>
  /** Query parameters (the properties of an object schema). */
  query?: z.ZodObject
  /** Path parameters by name (`:id`). */
  path?: Record<string, z.ZodType>
  /** The JSON answer of a success (status 200). */
  ok?: { schema: z.ZodType, description: string, setsRefreshCookie?: boolean }
  /** A success answered with a redirect (status 302): what `Location` holds. */
  redirect?: string
  /**
   * Error codes the route answers with (each with its status and message from `ERRORS`), besides
   * the ones every route may answer with (`internal_error`, and `payload_too_large` for methods
   * with a body). test/unit/openapi-routes.test.ts checks them against each route file.
   */
  errors: AuthErrorCode[]
}

/** Key of {@link ROUTE_DOCS}: method and handler file (`post token.post`). */
export const routeDocKey = (method: string, handler: string) => `${method.toLowerCase()} ${handler}`

const PASSWORD_POST_ERRORS: AuthErrorCode[] = ['bad_request', 'cross_origin_request', 'rate_limited']
const VERIFY_ERRORS: AuthErrorCode[] = ['invalid_verification_code', 'too_many_attempts', 'bad_request', 'rate_limited']
const SESSION_ERRORS: AuthErrorCode[] = ['unauthorized', 'session_revoked', 'impersonated_session', 'not_found']
const TWO_FACTOR_SETTINGS_ERRORS: AuthErrorCode[] = ['unauthorized', 'session_revoked', 'impersonated_session', 'cross_origin_request']
const TWO_FACTOR_FLOW_ERRORS: AuthErrorCode[] = ['two_factor_login_expired', 'bad_request', 'code_binding_mismatch', 'cross_origin_request']
const PASSKEY_OWNER_ERRORS: AuthErrorCode[] = ['unauthorized', 'session_revoked', 'impersonated_session']
const CODE_LINK = 'The link of the emailed message (`code`, `flow`; `email` instead of `flow` when the code is typed).'
const CODE_FORM = 'The code typed into a form (JSON or form body). With `Accept: application/json` the answer is JSON, else a redirect.'

/** One verify step of the password provider, for GET (the emailed link) and POST (a form). */
function verifyDocs(action: 'register' | 'login' | 'reset', id: string, effect: string, ok: RouteDoc['ok'] & object, extra: AuthErrorCode[] = []): Record<string, RouteDoc> {
  const common = { id, summary: `Verify a ${action} code`, redirect: effect }
  return {
    [routeDocKey('get', `password/server/routes/${action}-verify`)]: { ...common, id: `${id}Link`, description: CODE_LINK, query: req.verifyRequest, errors: [...VERIFY_ERRORS, ...extra] },
    [routeDocKey('post', `password/server/routes/${action}-verify`)]: { ...common, description: CODE_FORM, body: req.verifyRequest, bodyTypes: ['json', 'form'], ok, errors: [...VERIFY_ERRORS, ...extra, 'cross_origin_request'] },
  }
}

/**
 * The description of every route the module registers, by {@link routeDocKey}. Texts follow the
 * header comment of each route file; schemas are the ones the routes validate with and answer in.
 */
export const ROUTE_DOCS: Record<string, RouteDoc> = {
  [routeDocKey('post', 'server/routes/token.post')]: {
    id: 'ExchangeCode',
    summary: 'Exchange an authorization code for an access token',
    description: 'Exchanges the single-use code of the callback page for an access token and sets the HttpOnly refresh cookie (when token refresh is on). A code bound to a browser is only accepted with that browser\'s code cookie; a code presented once is used up whatever the outcome.',
    body: req.tokenRequest,
    ok: { schema: res.tokenResponse, description: 'The access token', setsRefreshCookie: true },
    errors: ['bad_request', 'invalid_code', 'code_binding_mismatch', 'cross_origin_request'],
  },
  [routeDocKey('post', 'server/routes/refresh.post')]: {
    id: 'Refresh',
    summary: 'Get a new access token with the refresh cookie',
    description: 'Rotates the refresh token of the cookie and signs a new access token. A rotated token used again after the grace period revokes the whole session.',
    auth: 'refreshCookie',
    ok: { schema: res.refreshResponse, description: 'A new access token (and the successor refresh cookie)', setsRefreshCookie: true },
    errors: ['invalid_refresh_token', 'refresh_token_reused', 'refresh_cookie_conflict', 'impersonated_session', 'cross_origin_request', 'not_found'],
  },
  [routeDocKey('post', 'server/routes/logout.post')]: {
    id: 'Logout',
    summary: 'Log out',
    description: 'Revokes the session of the refresh cookie (any token of the session ends it) and deletes the cookie. Succeeds without a cookie too.',
    auth: 'refreshCookie',
    ok: { schema: res.successResponse, description: 'Logged out' },
    errors: ['cross_origin_request'],
  },
  [routeDocKey('get', 'server/routes/me.get')]: {
    id: 'CurrentUser',
    summary: 'The current user',
    description: 'The claims of the access token, custom claims included.',
    auth: 'bearer',
    ok: { schema: res.claimsResponse, description: 'The token\'s claims' },
    errors: ['unauthorized', 'session_revoked'],
  },
  [routeDocKey('get', 'server/routes/jwks.get')]: {
    id: 'Jwks',
    summary: 'Public keys of the access tokens',
    description: 'The RS256 public keys for services that verify access tokens. With HS256 there is none to publish (404).',
    ok: { schema: res.jwksResponse, description: 'JSON Web Key Set' },
    errors: ['not_found'],
  },
  [routeDocKey('post', 'impersonation/server/routes/impersonate.post')]: {
    id: 'Impersonate',
    summary: 'Start impersonating a user',
    description: 'Issues an access token of the target user and a refresh cookie of the impersonated session (it cannot be refreshed). Statuses raised by the host\'s check hook or fetchTarget pass through.',
    auth: 'bearer',
    body: req.impersonateRequest,
    ok: { schema: res.accessTokenResponse, description: 'Access token of the impersonated user', setsRefreshCookie: true },
    errors: ['bad_request', 'unauthorized', 'session_revoked', 'impersonation_chain', 'forbidden', 'not_found'],
  },
  [routeDocKey('post', 'impersonation/server/routes/unimpersonate.post')]: {
    id: 'Unimpersonate',
    summary: 'End an impersonation',
    description: 'With the impersonated access token and the refresh cookie of the impersonated session: restores the original user in the session their token belonged to (it never creates one; 401 session_revoked when that session has ended).',
    auth: 'bearerAndRefreshCookie',
    ok: { schema: res.accessTokenResponse, description: 'Access token of the original user', setsRefreshCookie: true },
    errors: ['not_impersonating', 'unauthorized', 'impersonation_ended', 'session_revoked', 'impersonation_session_mismatch', 'not_found', 'cross_origin_request'],
  },
  [routeDocKey('get', 'server/routes/sessions/list.get')]: {
    id: 'ListSessions',
    summary: 'The caller\'s sessions',
    description: 'The caller\'s live sessions (logins), most recently used first, with `current: true` on the session of the asking token. Nothing secret is listed.',
    auth: 'bearer',
    ok: { schema: res.sessionsResponse, description: 'The sessions' },
    errors: SESSION_ERRORS,
  },
  [routeDocKey('post', 'server/routes/sessions/revoke-others.post')]: {
    id: 'RevokeOtherSessions',
    summary: 'End every other session',
    description: 'Ends every session of the caller but the one of this token.',
    auth: 'bearer',
    ok: { schema: res.revokeOthersResponse, description: 'How many sessions were ended' },
    errors: SESSION_ERRORS,
  },
  [routeDocKey('delete', 'server/routes/sessions/revoke.delete')]: {
    id: 'RevokeSession',
    summary: 'End one session',
    description: 'Ends one of the caller\'s sessions (the current one too). Another user\'s session id answers 404.',
    auth: 'bearer',
    path: { id: req.sessionIdSchema },
    ok: { schema: res.successResponse, description: 'The session has ended' },
    errors: SESSION_ERRORS,
  },
  [routeDocKey('get', 'oauth/server/routes/login.get')]: {
    id: 'Login',
    summary: 'Log in with an OAuth provider',
    description: 'Without `code`/`state`/`error`: redirects to the provider. On the way back: redirects to the callback page with an authorization code, or to the error page with `error` and `error_description`. Query: `redirect` (same-origin path to land on after login).',
    redirect: 'The provider, the callback page (`?code=`) or the error page (`?error=`)',
    errors: ['not_found'],
  },
  [routeDocKey('get', 'oauth/server/routes/mock-authorize.get')]: {
    id: 'MockAuthorize',
    summary: 'Mock provider: authorize',
    description: 'Development OAuth provider (404 in production unless enabled). Redirects back with a 60-second code, or with `error`.',
    query: req.mockAuthorizeRequest,
    redirect: '`redirect_uri` with `code` and `state`, or with `error` and `error_description`',
    errors: ['invalid_request', 'not_found'],
  },
  [routeDocKey('post', 'oauth/server/routes/mock-token.post')]: {
    id: 'MockToken',
    summary: 'Mock provider: token',
    description: 'Development OAuth provider: exchanges a code (PKCE S256). The client authenticates with HTTP Basic or in the body.',
    body: req.mockTokenRequest,
    bodyTypes: ['form'],
    ok: { schema: res.mockTokenResponse, description: 'The mock access token' },
    errors: ['invalid_request', 'unsupported_grant_type', 'invalid_grant', 'invalid_client', 'not_found'],
  },
  [routeDocKey('get', 'oauth/server/routes/mock-userinfo.get')]: {
    id: 'MockUserinfo',
    summary: 'Mock provider: user info',
    description: 'Development OAuth provider: the mock user of a mock access token (`Authorization: Bearer`).',
    ok: { schema: res.mockUserResponse, description: 'The mock user' },
    errors: ['invalid_token', 'not_found'],
  },
  [routeDocKey('post', 'password/server/routes/register.post')]: {
    id: 'PasswordRegister',
    summary: 'Register with email and password',
    description: 'Stores a pending registration and emails a 6-digit code.',
    body: req.credentialsRequest,
    ok: { schema: res.successResponse, description: 'A code has been sent' },
    errors: [...PASSWORD_POST_ERRORS, 'invalid_email', 'password_policy', 'user_exists', 'send_failed'],
  },
  [routeDocKey('post', 'password/server/routes/login.post')]: {
    id: 'PasswordLogin',
    summary: 'Log in with email and password',
    description: 'Checks the password and emails a 6-digit code. An unknown email and a wrong password answer alike.',
    body: req.credentialsRequest,
    ok: { schema: res.successResponse, description: 'A code has been sent' },
    errors: [...PASSWORD_POST_ERRORS, 'invalid_credentials', 'invalid_email', 'send_failed'],
  },
  [routeDocKey('post', 'password/server/routes/reset-request.post')]: {
    id: 'PasswordResetRequest',
    summary: 'Ask for a password reset code',
    description: 'Always the same answer: whether the account exists is told neither by the answer nor by its timing.',
    body: req.resetRequestRequest,
    ok: { schema: res.messageResponse, description: 'The same answer for every address' },
    errors: [...PASSWORD_POST_ERRORS, 'invalid_email'],
  },
  [routeDocKey('post', 'password/server/routes/reset-complete.post')]: {
    id: 'PasswordResetComplete',
    summary: 'Set a new password with a reset session',
    description: 'Consumes the reset session, stores the new hash and ends every session of the account.',
    body: req.resetCompleteRequest,
    ok: { schema: res.successResponse, description: 'The password has been changed' },
    errors: [...PASSWORD_POST_ERRORS, 'invalid_reset_session', 'password_policy'],
  },
  [routeDocKey('post', 'password/server/routes/change.post')]: {
    id: 'PasswordChange',
    summary: 'Change the password',
    description: 'Stores the new hash and ends every other session of the user; the current one stays.',
    auth: 'bearer',
    body: req.changePasswordRequest,
    ok: { schema: res.successResponse, description: 'The password has been changed' },
    errors: [...PASSWORD_POST_ERRORS, 'unauthorized', 'current_password_incorrect', 'password_policy', 'no_password_account', 'impersonated_session'],
  },
  ...verifyDocs('register', 'PasswordRegisterVerify', 'The callback page with an authorization code', { schema: res.redirectResponse, description: 'The account is created; `redirect` is the callback page with a code' }, ['user_exists']),
  ...verifyDocs('login', 'PasswordLoginVerify', 'The callback page with an authorization code', { schema: res.redirectResponse, description: '`redirect` is the callback page with a code' }),
  ...verifyDocs('reset', 'PasswordResetVerify', 'The reset page with `?session=<sessionId>`', { schema: res.resetSessionResponse, description: 'A 5-minute reset session' }),
  [routeDocKey('get', 'two-factor/server/routes/status.get')]: {
    id: 'TwoFactorStatus',
    summary: 'The caller\'s second factor',
    description: 'Whether the caller has a confirmed second factor, and how many unused recovery codes are left.',
    auth: 'bearer',
    ok: { schema: res.twoFactorStatusResponse, description: 'The second factor\'s status' },
    errors: ['unauthorized', 'session_revoked', 'impersonated_session'],
  },
  [routeDocKey('post', 'two-factor/server/routes/enrol.post')]: {
    id: 'TwoFactorEnrol',
    summary: 'Start a second-factor enrolment',
    description: 'A new TOTP secret, kept (encrypted) as a pending enrolment until a code confirms it. Shown once.',
    auth: 'bearer',
    ok: { schema: res.twoFactorEnrolmentResponse, description: 'The otpauth:// URI and the secret' },
    errors: [...TWO_FACTOR_SETTINGS_ERRORS, 'reauthentication_required', 'two_factor_already_enabled'],
  },
  [routeDocKey('post', 'two-factor/server/routes/confirm.post')]: {
    id: 'TwoFactorConfirm',
    summary: 'Confirm a second-factor enrolment',
    description: 'Checks the first code of the authenticator app, saves the enrolment through the host and answers the recovery codes (shown once).',
    auth: 'bearer',
    body: req.twoFactorCodeRequest,
    ok: { schema: res.recoveryCodesResponse, description: 'The recovery codes' },
    errors: [...TWO_FACTOR_SETTINGS_ERRORS, 'reauthentication_required', 'bad_request', 'two_factor_invalid_code', 'two_factor_enrolment_expired', 'two_factor_already_enabled'],
  },
  [routeDocKey('post', 'two-factor/server/routes/recovery-codes.post')]: {
    id: 'TwoFactorRecoveryCodes',
    summary: 'Make new recovery codes',
    description: 'With a current code of the authenticator app: new recovery codes (shown once); the old ones stop working.',
    auth: 'bearer',
    body: req.twoFactorCodeRequest,
    ok: { schema: res.recoveryCodesResponse, description: 'The new recovery codes' },
    errors: [...TWO_FACTOR_SETTINGS_ERRORS, 'reauthentication_required', 'bad_request', 'two_factor_invalid_code', 'two_factor_not_enabled', 'rate_limited'],
  },
  [routeDocKey('post', 'two-factor/server/routes/disable.post')]: {
    id: 'TwoFactorDisable',
    summary: 'Turn the second factor off',
    description: 'With the account\'s password (password accounts), a code of the authenticator app or a recovery code: deletes the second factor.',
    auth: 'bearer',
    body: req.twoFactorDisableRequest,
    ok: { schema: res.successResponse, description: 'The second factor is off' },
    errors: [...TWO_FACTOR_SETTINGS_ERRORS, 'reauthentication_required', 'bad_request', 'two_factor_invalid_code', 'current_password_incorrect', 'no_password_account', 'two_factor_not_enabled', 'rate_limited'],
  },
  [routeDocKey('post', 'two-factor/server/routes/verify.post')]: {
    id: 'TwoFactorVerify',
    summary: 'Prove the second factor of a login',
    description: 'A code of the authenticator app or a recovery code for the pending login `flow`, from the browser that passed the first factor. Completes the login: `redirect` is the callback page with an authorization code.',
    body: req.twoFactorVerifyRequest,
    ok: { schema: res.redirectResponse, description: '`redirect` is the callback page with a code' },
    errors: [...TWO_FACTOR_FLOW_ERRORS, 'two_factor_invalid_code', 'too_many_attempts', 'two_factor_not_enabled', 'rate_limited'],
  },
  [routeDocKey('post', 'two-factor/server/routes/login-enrol.post')]: {
    id: 'TwoFactorLoginEnrol',
    summary: 'Start the enrolment a login requires',
    description: 'For a pending login whose user must enrol: a new TOTP secret, kept with the pending login. Shown once.',
    body: req.twoFactorFlowRequest,
    ok: { schema: res.twoFactorEnrolmentResponse, description: 'The otpauth:// URI and the secret' },
    errors: [...TWO_FACTOR_FLOW_ERRORS, 'two_factor_already_enabled'],
  },
  [routeDocKey('post', 'two-factor/server/routes/login-confirm.post')]: {
    id: 'TwoFactorLoginConfirm',
    summary: 'Confirm the enrolment a login requires',
    description: 'The first code of the authenticator app: saves the enrolment through the host and completes the login. The recovery codes are shown once.',
    body: req.twoFactorConfirmLoginRequest,
    ok: { schema: res.loginEnrolledResponse, description: '`redirect` is the callback page with a code' },
    errors: [...TWO_FACTOR_FLOW_ERRORS, 'two_factor_invalid_code', 'too_many_attempts', 'two_factor_enrolment_expired', 'two_factor_already_enabled'],
  },
  [routeDocKey('post', 'passkey/server/routes/register-options.post')]: {
    id: 'PasskeyRegisterOptions',
    summary: 'Start registering a passkey',
    description: 'The options for `navigator.credentials.create()` with a single-use challenge (5 minutes) bound to the caller; `excludeCredentials` lists their passkeys.',
    auth: 'bearer',
    ok: { schema: res.passkeyCreationOptionsResponse, description: 'PublicKeyCredentialCreationOptionsJSON' },
    errors: [...PASSKEY_OWNER_ERRORS, 'cross_origin_request', 'reauthentication_required', 'passkey_not_configured'],
  },
  [routeDocKey('post', 'passkey/server/routes/register-verify.post')]: {
    id: 'PasskeyRegisterVerify',
    summary: 'Register a passkey',
    description: 'Consumes the challenge (issued to this caller), verifies the attestation for the relying party and its origins and stores the passkey through the host\'s `saveCredential`.',
    auth: 'bearer',
    body: req.passkeyRegisterVerifyRequest,
    ok: { schema: res.passkeyRegisteredResponse, description: 'The new passkey' },
    errors: [...PASSKEY_OWNER_ERRORS, 'bad_request', 'invalid_passkey', 'invalid_passkey_challenge', 'passkey_exists', 'cross_origin_request', 'reauthentication_required'],
  },
  [routeDocKey('post', 'passkey/server/routes/login-options.post')]: {
    id: 'PasskeyLoginOptions',
    summary: 'Start a passkey login',
    description: 'The options for `navigator.credentials.get()` with a single-use challenge (5 minutes) bound to this browser. Without `email`, `allowCredentials` is empty (discoverable passkeys); with one, that user\'s passkeys or, for an email without any, the same decoys on every request.',
    body: req.passkeyLoginOptionsRequest,
    ok: { schema: res.passkeyRequestOptionsResponse, description: 'PublicKeyCredentialRequestOptionsJSON' },
    errors: ['bad_request', 'invalid_email', 'cross_origin_request', 'rate_limited', 'passkey_not_configured'],
  },
  [routeDocKey('post', 'passkey/server/routes/login-verify.post')]: {
    id: 'PasskeyLoginVerify',
    summary: 'Log in with a passkey',
    description: 'Consumes the challenge (this browser\'s only), verifies the assertion, refuses a signature counter that went backwards and completes the login: `redirect` is where the browser goes next (the callback page with a code bound to this browser).',
    body: req.passkeyLoginVerifyRequest,
    ok: { schema: res.passkeyLoginResponse, description: 'Where the browser goes next' },
    errors: ['bad_request', 'invalid_passkey', 'invalid_passkey_challenge', 'passkey_counter_regressed', 'cross_origin_request', 'rate_limited'],
  },
  [routeDocKey('get', 'passkey/server/routes/credentials.get')]: {
    id: 'PasskeyList',
    summary: 'The caller\'s passkeys',
    description: 'The caller\'s passkeys, newest first (no public keys, no counters).',
    auth: 'bearer',
    ok: { schema: res.passkeyListResponse, description: 'The passkeys' },
    errors: PASSKEY_OWNER_ERRORS,
  },
  [routeDocKey('delete', 'passkey/server/routes/credential.delete')]: {
    id: 'PasskeyDelete',
    summary: 'Delete a passkey',
    description: 'Deletes one of the caller\'s passkeys through the host\'s `deleteCredential`. Another user\'s passkey answers 404.',
    auth: 'bearer',
    path: { id: req.passkeyIdSchema },
    ok: { schema: res.successResponse, description: 'The passkey is deleted' },
    errors: [...PASSKEY_OWNER_ERRORS, 'cross_origin_request', 'reauthentication_required', 'not_found'],
  },
}
