import type { H3Event } from 'h3'
import type { AuthContext } from './context'
import { authError, message } from '../edge/errors'
import { describeClient } from '../edge/client-description'
import { refusalWindow, requestRefused, securityEvent } from '../edge/security-event'
import { randomToken, s256, safeEqual } from '../store/crypto'
import { matchesCodeBinding } from './code-binding'
import { consumeAuthCode, type AuthCodeRecord } from './records/auth-code'
import { issueRefreshToken, rotateRefreshToken, type RefreshTokenRecord, type TokenChannel } from './records/refresh-token'
import { mintSessionToken, resolveGlobalClaims } from './session-tokens'
import { subjectOf } from './subject'
import { indexUpstreamLogin } from './records/upstream-login'

/**
 * The two grants of a session, shared by the cookie endpoints (`POST /auth/token`, `/auth/refresh`) and the
 * native ones (the refresh token in the body): an authorization code for a new session, a refresh token for
 * a new access token. Each channel's tokens and codes are refused by the other.
 */

/** What proves the holder of a code: the browser's code cookie, or a native app's PKCE verifier (RFC 7636). */
export type CodeProof = { channel: 'cookie' } | { channel: 'native', codeVerifier: string }

/** A code taken from the store, with its user's `sub`. */
export type RedeemedCode = AuthCodeRecord & { userId: string }

/** Why a code is refused to its presenter, or undefined when the proof holds. */
function codeRefusal(event: H3Event, ctx: AuthContext, record: AuthCodeRecord, proof: CodeProof): 'other_browser' | 'other_channel' | 'pkce' | undefined {
  if (proof.channel === 'native') {
    if (record.codeChallenge === undefined) return 'other_channel'
    return safeEqual(s256(proof.codeVerifier), record.codeChallenge) ? undefined : 'pkce'
  }
  if (record.codeChallenge !== undefined) return 'other_channel'
  return record.binding !== undefined && !matchesCodeBinding(event, ctx, record.binding) ? 'other_browser' : undefined
}

const REFUSED_CODE_TEXT = {
  other_browser: undefined,
  other_channel: message('code_other_channel'),
  pkce: message('code_verifier_mismatch'),
}

/**
 * Takes a code (used up whatever the outcome) and checks its proof: 401 `invalid_code` when unknown, expired or
 * used, 401 `code_binding_mismatch` when another browser, another channel or a wrong verifier presents it.
 */
export async function redeemAuthCode(ctx: AuthContext, event: H3Event, code: string, proof: CodeProof): Promise<RedeemedCode> {
  // Taken before any other check: a code presented once is used up, whatever the outcome.
  const record = await consumeAuthCode(ctx, code)
  const userId = record ? subjectOf(record.user) : undefined
  if (!record || !userId) {
    // Anyone can send made-up codes, and these routes have no rate limit: one event per client each 5 minutes.
    await securityEvent(ctx, event, { type: 'code.refused', outcome: 'failure', details: { reason: 'unknown' }, aggregate: refusalWindow(ctx, event, 'unknown') })
    throw authError('invalid_code')
  }
  const refusal = codeRefusal(event, ctx, record, proof)
  if (refusal) {
    await securityEvent(ctx, event, { type: 'code.refused', outcome: 'failure', actor: null, subject: userId, details: { reason: refusal, provider: record.provider } })
    throw authError('code_binding_mismatch', REFUSED_CODE_TEXT[refusal])
  }
  return { ...record, userId }
}

/** A session started by a code: its first access token and, with token refresh on, its refresh token. */
export interface StartedSession {
  token: string
  expiresIn: number
  /** The session (`sid`). */
  family: string
  /** Undefined when token refresh is off. */
  refreshToken?: string
}

/** Starts the session of a redeemed code on `channel` (its refresh token is that channel's only) and reports the login. */
export async function startSession(ctx: AuthContext, event: H3Event, record: RedeemedCode, channel: TokenChannel): Promise<StartedSession> {
  const session = { user: record.user, userId: record.userId, provider: record.provider, family: randomToken(16), impersonation: undefined }
  // Indexed before the session exists: the provider's back-channel logout can name it from now on.
  const upstream = record.upstream ? await indexUpstreamLogin(ctx, session, record.upstream) : undefined
  let refreshToken: string | undefined
  if (ctx.options.tokenRefresh.enabled) {
    const issued = await issueRefreshToken(ctx, { ...session, claims: record.claims, client: describeClient(event, ctx), upstream, ...(channel === 'native' ? { channel } : {}) })
    session.family = issued.record.family
    refreshToken = issued.token
  }
  const { token, expiresIn } = await mintSessionToken(ctx, session, record.claims)
  await securityEvent(ctx, event, { type: 'login', actor: record.userId, session: session.family, details: { provider: record.provider, secondFactor: record.secondFactor, client: channel === 'native' ? channel : undefined } })
  return { token, expiresIn, family: session.family, refreshToken }
}

/** A new access token of a session, and the refresh token its holder keeps now. */
export interface RefreshedSession {
  token: string
  expiresIn: number
  record: RefreshTokenRecord
  /** The successor refresh token (the same one to every use within the grace period); undefined: keep the presented one. */
  refreshToken: string | undefined
}

export interface RefreshSessionOptions {
  /** The channel the token came by: a token of the other one is refused as invalid, left as it is. */
  channel: TokenChannel
  /** Runs before the session's end is answered (401 `invalid_refresh_token` or `refresh_token_reused`): the cookie is deleted. */
  onEnded?: () => void
}

/**
 * Rotates a refresh token (grace period, reuse detection: `rotateRefreshToken`) and signs a new access token
 * with the current custom claims. 401 `refresh_token_reused` revokes the session, 401 `invalid_refresh_token`,
 * 403 `impersonated_session` (never refreshed).
 */
export async function refreshSession(ctx: AuthContext, event: H3Event, presented: string, { channel, onEnded }: RefreshSessionOptions): Promise<RefreshedSession> {
  const result = await rotateRefreshToken(ctx, presented, { rotate: record => !record.impersonation, channel, event })
  if (result.status === 'reused') {
    await securityEvent(ctx, event, { type: 'refresh.reused', outcome: 'failure', actor: null, subject: result.userId, session: result.family })
    onEnded?.()
    throw authError('refresh_token_reused')
  }
  if (result.status === 'invalid') {
    if (result.channel) await requestRefused(ctx, event, 'other_channel', { details: { channel } })
    onEnded?.()
    throw authError('invalid_refresh_token')
  }
  if (result.record.impersonation) {
    throw authError('impersonated_session', message('impersonated_refresh'))
  }
  const claims = await resolveGlobalClaims(ctx, result.record.user, result.record.claims)
  const { token, expiresIn } = await mintSessionToken(ctx, result.record, claims)
  // Off the hot path unless asked for: a refresh is the module's most frequent request.
  if (ctx.options.audit?.refreshes) await securityEvent(ctx, event, { type: 'session.refreshed', actor: result.record.userId, session: result.record.family })
  return { token, expiresIn, record: result.record, refreshToken: result.token }
}
