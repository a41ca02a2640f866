import { createError, isError, setResponseHeader, setResponseStatus, type H3Error, type H3Event } from 'h3'
import type { Logger } from './logger'
import { MESSAGES, type DetailKey } from './messages'
import { renderWith, type MessageOf, type ParamOf, type TextOf } from '../../../shared/text'

/** Status and default message (English) of an error code. */
export interface AuthErrorSpec {
  status: number
  message: string
}

/**
 * Every error code the module answers with, its status and default message: the English of the code's key in the
 * locale tables (docs/errors.md is checked against it; docs/i18n.md: the other locales).
 */
export const ERRORS = {
  bad_request: { status: 400, message: 'Bad request' },
  invalid_email: { status: 400, message: 'Invalid email format' },
  password_policy: { status: 400, message: 'The password does not meet the password policy' },
  user_exists: { status: 400, message: 'User already exists' },
  breach_check_unavailable: { status: 503, message: 'The password could not be checked against known data breaches: try again shortly' },
  invalid_credentials: { status: 400, message: 'Invalid email or password' },
  invalid_verification_code: { status: 400, message: 'Invalid or expired code' },
  too_many_attempts: { status: 400, message: 'Maximum attempts exceeded' },
  invalid_reset_session: { status: 400, message: 'Invalid or expired reset session' },
  invalid_magic_link: { status: 400, message: 'Invalid, expired or already used login link' },
  current_password_incorrect: { status: 400, message: 'Current password is incorrect' },
  no_password_account: { status: 400, message: 'This account has no password' },
  not_impersonating: { status: 400, message: 'Not currently impersonating' },
  invalid_passkey: { status: 400, message: 'The passkey could not be verified' },
  invalid_passkey_challenge: { status: 400, message: 'Invalid, expired or already used passkey challenge' },
  passkey_exists: { status: 400, message: 'This passkey is registered already' },
  passkey_counter_regressed: { status: 401, message: 'The passkey\'s signature counter went backwards: it may have been cloned' },
  passkey_not_configured: { status: 500, message: 'Passkeys are not configured for this site' },
  invalid_request: { status: 400, message: 'Invalid request' },
  invalid_grant: { status: 400, message: 'The code is invalid, expired or was issued for another client or redirect_uri' },
  unsupported_grant_type: { status: 400, message: 'Only authorization_code is supported' },
  invalid_code: { status: 401, message: 'Invalid or expired authorization code' },
  code_binding_mismatch: { status: 401, message: 'This authorization code was issued to another browser' },
  invalid_refresh_token: { status: 401, message: 'Invalid or expired refresh token' },
  refresh_token_reused: { status: 401, message: 'Refresh token was already used; the session has been revoked' },
  refresh_cookie_conflict: { status: 401, message: 'Several refresh cookies came with this request: log in again' },
  unauthorized: { status: 401, message: 'Authentication required' },
  session_revoked: { status: 401, message: 'The session of this access token has ended' },
  impersonation_ended: { status: 401, message: 'The impersonation has already ended' },
  invalid_client: { status: 401, message: 'Client authentication failed' },
  invalid_token: { status: 401, message: 'Invalid or expired access token' },
  impersonated_session: { status: 403, message: 'Not allowed in an impersonated session' },
  reauthentication_required: { status: 403, message: 'Log in again to continue: this change needs a recent login' },
  cross_origin_request: { status: 403, message: 'Cross-origin requests are not allowed' },
  browser_request: { status: 403, message: 'This endpoint is for native and server clients, not for browsers' },
  forbidden: { status: 403, message: 'Forbidden' },
  impersonation_chain: { status: 403, message: 'Already impersonating: end the current impersonation first' },
  impersonation_session_mismatch: { status: 403, message: 'This impersonation was not started in this browser' },
  not_found: { status: 404, message: 'Not found' },
  payload_too_large: { status: 413, message: 'Request body is too large' },
  rate_limited: { status: 429, message: 'Too many requests, try again later' },
  internal_error: { status: 500, message: 'Internal server error' },
  send_failed: { status: 500, message: 'Failed to send code' },
  two_factor_invalid_code: { status: 400, message: 'Invalid two-factor code' },
  two_factor_login_expired: { status: 400, message: 'This login has expired or was already completed: log in again' },
  two_factor_not_enabled: { status: 400, message: 'Two-factor authentication is not enabled for this account' },
  two_factor_enrolment_expired: { status: 400, message: 'No two-factor enrolment is pending: start again' },
  two_factor_already_enabled: { status: 409, message: 'Two-factor authentication is already enabled for this account' },
  session_stale: { status: 401, message: 'The access token is out of date: refresh it' },
  permission_denied: { status: 403, message: 'You do not have the permission for this' },
  role_not_grantable: { status: 403, message: 'You cannot grant, or change a member with, a role that has permissions you do not have' },
  own_role: { status: 403, message: 'You cannot change your own role' },
  unknown_role: { status: 400, message: 'No such role' },
  last_owner: { status: 409, message: 'An organization must keep at least one owner' },
  slug_taken: { status: 409, message: 'This slug is taken' },
  already_member: { status: 409, message: 'Already a member of this organization' },
  invitation_invalid: { status: 400, message: 'Invalid, expired or already used invitation' },
  invitation_email_mismatch: { status: 403, message: 'This invitation was sent to another email address, or that address is not verified' },
  busy: { status: 503, message: 'Busy: try again shortly' },
  organization_limit: { status: 409, message: 'You have reached the number of organizations you may own' },
  team_limit: { status: 409, message: 'This organization has the most teams it may have' },
  provider_not_linked: { status: 409, message: 'No tokens of this provider are kept for this user: log in with it' },
  provider_link_broken: { status: 409, message: 'The provider no longer accepts this user\'s refresh token: log in with it again' },
  identity_taken: { status: 409, message: 'This provider account is linked to another user' },
  provider_already_linked: { status: 409, message: 'An account of this provider is linked already: unlink it first' },
  founding_identity: { status: 409, message: 'This account was made with this provider account, whose login opens it whatever is linked: it cannot be unlinked' },
  last_login_method: { status: 409, message: 'This is the last way to log in to this account: add another one first' },
  provider_unavailable: { status: 502, message: 'The provider could not refresh its token: try again later' },
} as const satisfies Record<string, AuthErrorSpec>

/** Stable machine-readable codes carried in the `error` field of every error body. */
export type AuthErrorCode = keyof typeof ERRORS

/** True for a code of {@link ERRORS}. */
export function isAuthErrorCode(value: unknown): value is AuthErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERRORS, value)
}

/** Every key a locale table holds: the error codes (their messages), the details and the emails ({@link MESSAGES}). */
export type MessageKey = AuthErrorCode | DetailKey
/** A complete locale table: a missing key is a type error. */
export type LocaleMessages = Record<MessageKey, string>
/** A host's texts of one locale: any of the keys. */
export type MessageOverrides = Partial<LocaleMessages>
/** A text of the tables with its parameters. */
export type Message = MessageOf<MessageKey>
/** A text to answer: one of the tables' ({@link message}), or a host's own string (answered as it is). */
export type Text = TextOf<MessageKey>
/** Looks a key up in one locale's table; what it lacks is English. */
export type Lookup = (key: MessageKey) => string

/** Every key of a complete table (the checks of the host's texts, the completeness test). */
export const MESSAGE_KEYS = [...Object.keys(ERRORS), ...Object.keys(MESSAGES)] as MessageKey[]

/** A text of the tables: `message('no_such_team')`, `message('body_too_large', { limit })`. */
export function message(key: MessageKey, params?: Record<string, ParamOf<MessageKey>>): Message {
  return params ? { key, params } : { key }
}

/** The English table: {@link ERRORS}' messages and {@link MESSAGES}. */
export const english: Lookup = key => (Object.hasOwn(MESSAGES, key) ? MESSAGES[key as DetailKey] : ERRORS[key as AuthErrorCode].message)

/** A text in a locale ({@link english} by default): its parameters filled in. */
export function renderText(text: Text, lookup: Lookup = english): string {
  return renderWith(text, lookup)
}

/** Body of every error answer: `{ statusCode, message, error }`. */
export interface AuthErrorBody {
  statusCode: number
  message: string
  error: AuthErrorCode
}

export interface AuthErrorData {
  code: AuthErrorCode
  headers?: Record<string, string>
  /** What the client reads, rendered in the request's locale when answered. */
  text?: Text
}

/**
 * Raise an error with a stable code whose status comes from {@link ERRORS}, e.g. `throw authError('invalid_code')`,
 * `authError('not_found', message('no_such_team'))`, or with a host's own text `authError('bad_request', 'email is
 * required')`. An h3 error, so it answers right from a host handler too; its `message` is the English text.
 * @param code The stable code; it sets the status.
 * @param text What the client reads: a text of the tables (in the request's locale) or a string (as it is);
 * by default the code's message, in the request's locale.
 * @param headers Response headers to send with it (e.g. `retry-after`). @default {}
 */
export function authError(code: AuthErrorCode, text: Text = { key: code }, headers: Record<string, string> = {}): H3Error<AuthErrorData> {
  const rendered = renderText(text)
  return createError<AuthErrorData>({ statusCode: ERRORS[code].status, statusMessage: rendered, message: rendered, data: { code, headers, text } })
}

/** The stable code of an error raised with `authError` (or any h3 error carrying one of {@link ERRORS}). */
export function authErrorCode(error: unknown): AuthErrorCode | undefined {
  const code = isError(error) ? (error.data as { code?: unknown } | undefined)?.code : undefined
  return isAuthErrorCode(code) ? code : undefined
}

const GENERIC_CODES: Record<number, AuthErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  429: 'rate_limited',
}

/**
 * Anything thrown as a client-safe body: h3 errors keep status and message (the text of `authError` in `lookup`'s
 * locale); anything else is a logged, generic 500.
 */
export function toErrorBody(error: unknown, logger?: Pick<Logger, 'error'>, lookup: Lookup = english): { body: AuthErrorBody, headers: Record<string, string> } {
  const raisedCode = authErrorCode(error)
  // h3 makes a plain 500 of any wrapped failure: it keeps its message only when raised on purpose (with a code).
  if (isError(error) && !error.unhandled && error.statusCode >= 400 && (error.statusCode !== 500 || raisedCode !== undefined)) {
    const code = raisedCode ?? GENERIC_CODES[error.statusCode] ?? (error.statusCode >= 500 ? 'internal_error' : 'bad_request')
    const data = error.data as Partial<AuthErrorData> | undefined
    const message = raisedCode && data?.text !== undefined ? renderText(data.text, lookup) : error.message || error.statusMessage || lookup(code)
    const headers = data?.headers ?? {}
    return { body: { statusCode: error.statusCode, message, error: code }, headers }
  }
  logger?.error('Unexpected error', error)
  return { body: { statusCode: 500, message: lookup('internal_error'), error: 'internal_error' }, headers: {} }
}

/** Writes an error answer on the event and returns its body (for `return` from a handler). */
export function sendAuthError(event: H3Event, error: unknown, logger?: Pick<Logger, 'error'>, lookup?: Lookup): AuthErrorBody {
  const { body, headers } = toErrorBody(error, logger, lookup)
  setResponseStatus(event, body.statusCode)
  setResponseHeader(event, 'content-type', 'application/json')
  setResponseHeader(event, 'cache-control', 'no-store')
  for (const [name, value] of Object.entries(headers)) setResponseHeader(event, name, value)
  return body
}
