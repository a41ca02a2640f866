import type { H3Event } from 'h3'
import { createError, isError, setResponseHeader, setResponseStatus, type H3Error } from 'h3'
import type { Logger } from './logger'

/** Stable machine-readable codes carried in the `error` field of every error body. */
export type AuthErrorCode =
  | 'bad_request'
  | 'invalid_code'
  | 'code_binding_mismatch'
  | 'invalid_refresh_token'
  | 'refresh_token_reused'
  | 'impersonated_session'
  | 'unauthorized'
  | 'session_revoked'
  | 'forbidden'
  | 'cross_origin_request'
  | 'not_found'
  | 'payload_too_large'
  | 'rate_limited'
  | 'internal_error'

/** Body of every error answer: `{ statusCode, message, error }`. */
export interface AuthErrorBody {
  statusCode: number
  message: string
  error: string
}

/**
 * Raise an error with a stable code: `throw authError(401, 'invalid_code', 'Invalid or expired code')`.
 * It is an h3 error, so it also answers correctly when thrown from a host's own handler.
 */
export function authError(statusCode: number, code: AuthErrorCode | string, message: string, headers: Record<string, string> = {}): H3Error<AuthErrorData> {
  return createError<AuthErrorData>({ statusCode, statusMessage: message, message, data: { code, headers } })
}

export interface AuthErrorData {
  code: string
  headers?: Record<string, string>
}

/** The stable code of an error raised with `authError` (or any h3 error carrying one). */
export function authErrorCode(error: unknown): string | undefined {
  const code = isError(error) ? (error.data as Partial<AuthErrorData> | undefined)?.code : undefined
  return typeof code === 'string' ? code : undefined
}

const GENERIC_CODES: Record<number, AuthErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  429: 'rate_limited',
}

/**
 * Turns anything thrown into a client-safe body. h3 errors raised on purpose (`authError`, or a
 * host hook's `createError({ statusCode })`) keep their status and message; anything else becomes
 * a generic 500 and is logged with its stack on the server only.
 */
export function toErrorBody(error: unknown, logger?: Pick<Logger, 'error'>): { body: AuthErrorBody, headers: Record<string, string> } {
  const raisedCode = authErrorCode(error)
  // A plain 500 is what h3 makes of any wrapped failure: it keeps its message only when the module
  // raised it on purpose (it then has a code). Other statuses were chosen deliberately.
  if (isError(error) && !error.unhandled && error.statusCode >= 400 && (error.statusCode !== 500 || raisedCode !== undefined)) {
    const code = raisedCode ?? GENERIC_CODES[error.statusCode] ?? (error.statusCode >= 500 ? 'internal_error' : 'bad_request')
    const message = error.message || error.statusMessage || 'Request failed'
    const headers = (error.data as Partial<AuthErrorData> | undefined)?.headers ?? {}
    return { body: { statusCode: error.statusCode, message, error: code }, headers }
  }
  logger?.error('Unexpected error', error)
  return { body: { statusCode: 500, message: 'Internal server error', error: 'internal_error' }, headers: {} }
}

/** Writes an error answer on the event and returns its body (for `return` from a handler). */
export function sendAuthError(event: H3Event, error: unknown, logger?: Pick<Logger, 'error'>): AuthErrorBody {
  const { body, headers } = toErrorBody(error, logger)
  setResponseStatus(event, body.statusCode)
  setResponseHeader(event, 'content-type', 'application/json')
  setResponseHeader(event, 'cache-control', 'no-store')
  for (const [name, value] of Object.entries(headers)) setResponseHeader(event, name, value)
  return body
}
