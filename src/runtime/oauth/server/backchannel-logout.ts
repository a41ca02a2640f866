/** OpenID Connect Back-Channel Logout 1.0: the provider's logout token ends the sessions it names. */
import type { H3Event } from 'h3'
import { createRemoteJWKSet, customFetch, decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose'
import type * as oauth from 'oauth4webapi'
import type { AuthContext } from '../../server/lib/core/context'
import { revokeFamily } from '../../server/lib/core/records/refresh-token'
import { upstreamSessions } from '../../server/lib/core/records/upstream-login'
import { authError } from '../../server/lib/edge/errors'
import { refusalWindow, securityEvent } from '../../server/lib/edge/security-event'
import { isRecord } from '../../shared/values'
import { OAUTH_RECORDS } from './oauth-state'
import type { ProviderFetch, ResolvedProvider } from './preset'
import { authorizationServerOf, guardedFetch, PROVIDER_TIMEOUT_MS } from './provider-http'
import { providerOf } from './provider-registry'

/** The event a logout token carries (`events` claim). */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout'

/** Largest body of a back-channel logout (a logout token is a few hundred bytes). */
export const BACKCHANNEL_MAX_BODY = 16 * 1024

/** How old (`iat`) a logout token may be, in seconds, and the clock skew allowed. */
export const LOGOUT_TOKEN_MAX_AGE = 300
export const LOGOUT_TOKEN_SKEW = 60

/** The `typ` headers a logout token may carry (Back-Channel Logout 1.0, 2.4), lower case; none at all passes too. */
const LOGOUT_TOKEN_TYPES: ReadonlySet<string> = new Set(['logout+jwt', 'application/logout+jwt', 'jwt'])

/** Longest `jti` kept (its single use is stored). */
const MAX_JTI = 256

const TENANT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Why a logout token was refused (`details.reason` of the refused `logout` event). */
export class LogoutTokenError extends Error {
  constructor(readonly reason: string, message: string) {
    super(message)
  }
}

/** What a verified logout token names. */
export interface LogoutClaims {
  iss: string
  jti: string
  sid?: string
  sub?: string
  /** Until when (epoch s) the token would be accepted: how long its `jti` is kept. */
  acceptedUntil: number
}

const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>()

/** The provider's key set, fetched through the guarded fetch and cached per URL (jose refetches on an unknown `kid`, at most every 30 s). */
function keySetOf(jwksUri: string, fetchFn: ProviderFetch): ReturnType<typeof createRemoteJWKSet> {
  let keys = keySets.get(jwksUri)
  if (!keys) {
    if (keySets.size > 100) keySets.clear()
    keys = createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: PROVIDER_TIMEOUT_MS, [customFetch]: (url, init) => fetchFn(url, init as RequestInit) })
    keySets.set(jwksUri, keys)
  }
  return keys
}

/** Forgets the cached key sets (tests). */
export function clearLogoutKeySets(): void {
  keySets.clear()
}

/** Signature algorithms accepted: the provider's ID token ones that use its published keys (never `none` or a shared secret). */
function algorithmsOf(as: oauth.AuthorizationServer): string[] {
  const listed = Array.isArray(as.id_token_signing_alg_values_supported) ? as.id_token_signing_alg_values_supported : ['RS256']
  return listed.filter(alg => typeof alg === 'string' && alg !== 'none' && !alg.startsWith('HS'))
}

/** The issuer a token must name: the provider's, with the token's own tenant for a multi-tenant Entra ID template. */
function expectedIssuer(as: oauth.AuthorizationServer, provider: ResolvedProvider, payload: JWTPayload): string {
  if (!provider.multiTenantIssuer) return as.issuer
  const tid = payload.tid
  if (typeof tid !== 'string' || !TENANT_ID.test(tid)) throw new LogoutTokenError('issuer', 'The logout token names no valid tenant')
  return as.issuer.replace('{tenantid}', tid)
}

const refuse = (reason: string, message: string): never => {
  throw new LogoutTokenError(reason, message)
}

/**
 * Verifies a logout token (Back-Channel Logout 1.0, 2.6): a signature by the provider's keys with one of its
 * algorithms, `iss`, `aud` (our client id), `iat` within {@link LOGOUT_TOKEN_MAX_AGE}, `exp` when present, the
 * back-channel logout event, `sid` or `sub`, a `jti`, and no `nonce`. Does not check the `jti`'s single use.
 */
export async function verifyLogoutToken(token: string, provider: ResolvedProvider, as: oauth.AuthorizationServer, fetchFn: ProviderFetch, now = Date.now()): Promise<LogoutClaims> {
  let header: ReturnType<typeof decodeProtectedHeader>
  let unverified: JWTPayload
  try {
    header = decodeProtectedHeader(token)
    unverified = decodeJwt(token)
  }
  catch {
    return refuse('malformed', 'The logout token is not a signed JWT')
  }
  const algorithms = algorithmsOf(as)
  if (typeof header.alg !== 'string' || !algorithms.includes(header.alg)) return refuse('algorithm', 'The logout token is not signed with an algorithm of the provider')
  // Explicitly typed as another kind of JWT (an access token, a security event token): never a logout token (RFC 8725 3.11).
  if (header.typ !== undefined && !LOGOUT_TOKEN_TYPES.has(String(header.typ).toLowerCase())) return refuse('typ', 'The logout token is typed as another kind of token')
  if (!as.jwks_uri) return refuse('keys', 'The provider publishes no keys')
  let payload: JWTPayload
  try {
    ({ payload } = await jwtVerify(token, keySetOf(as.jwks_uri, fetchFn), {
      issuer: expectedIssuer(as, provider, unverified),
      audience: provider.clientId,
      algorithms,
      maxTokenAge: LOGOUT_TOKEN_MAX_AGE,
      clockTolerance: LOGOUT_TOKEN_SKEW,
      currentDate: new Date(now),
      requiredClaims: ['iat', 'jti'],
    }))
  }
  catch (cause) {
    if (cause instanceof LogoutTokenError) throw cause
    const code = (cause as { code?: unknown }).code
    return refuse(typeof code === 'string' ? code.replace(/^ERR_/, '').toLowerCase() : 'invalid', 'The logout token is not valid')
  }
  const events = payload.events
  if (!isRecord(events) || !isRecord(events[BACKCHANNEL_LOGOUT_EVENT])) return refuse('events', 'The logout token carries no back-channel logout event')
  if (payload.nonce !== undefined) return refuse('nonce', 'A logout token must not carry a nonce')
  const sid = typeof payload.sid === 'string' && payload.sid ? payload.sid : undefined
  const sub = typeof payload.sub === 'string' && payload.sub ? payload.sub : undefined
  if (payload.sid !== undefined && !sid) return refuse('sid', 'The logout token\'s sid is not a string')
  if (payload.sub !== undefined && !sub) return refuse('subject', 'The logout token\'s sub is not a string')
  // As in an ID token (OpenID Connect Core 3.1.3.7): a token issued to another client names it as its authorized party.
  if (payload.azp !== undefined && payload.azp !== provider.clientId) return refuse('azp', 'The logout token was issued to another client')
  if (!sid && !sub) return refuse('subject', 'The logout token names neither a session (sid) nor a user (sub)')
  const { jti, iat, exp } = payload
  if (typeof jti !== 'string' || !jti || jti.length > MAX_JTI) return refuse('jti', 'The logout token has no valid jti')
  const byAge = iat! + LOGOUT_TOKEN_MAX_AGE + LOGOUT_TOKEN_SKEW
  const acceptedUntil = typeof exp === 'number' ? Math.min(byAge, exp + LOGOUT_TOKEN_SKEW) : byAge
  return { iss: payload.iss!, jti, sid, sub, acceptedUntil }
}

const jtiKey = (ctx: AuthContext, provider: string, claims: LogoutClaims) => ctx.store.key(OAUTH_RECORDS.logoutToken, `${provider}\0${claims.iss}\0${claims.jti}`)

/** Stores the `jti` until the token would expire: true the first time, false for a replay. */
async function firstUse(ctx: AuthContext, provider: string, claims: LogoutClaims, now: number): Promise<boolean> {
  const ttl = Math.max(1, Math.ceil(claims.acceptedUntil - now / 1000))
  return ctx.store.writeIfAbsent(jtiKey(ctx, provider, claims), now, ttl)
}

/**
 * Handles `POST <authPath>/backchannel-logout/<provider>`: verifies the logout token, uses its `jti` once,
 * then ends our sessions of the provider's `sid` (or of its `sub`). Refusals are a 400 `invalid_request`
 * and a `logout` failure event; a valid token naming no session of ours ends nothing and succeeds.
 */
export async function backchannelLogout(ctx: AuthContext, event: H3Event, name: string, token: string, fetchFn: ProviderFetch = guardedFetch()): Promise<{ ended: number }> {
  let provider: ResolvedProvider
  try {
    provider = providerOf(ctx, name, undefined)
  }
  catch {
    throw authError('not_found')
  }
  if (provider.local || !provider.openid) throw authError('not_found')
  const now = Date.now()
  try {
    let as: oauth.AuthorizationServer
    try {
      as = await authorizationServerOf(provider, 'http://localhost', fetchFn)
    }
    catch (cause) {
      ctx.logger.warn(`Back-channel logout of ${provider.name}: the provider's metadata could not be read`, cause)
      throw new LogoutTokenError('provider_unavailable', 'The provider\'s metadata could not be read')
    }
    const claims = await verifyLogoutToken(token, provider, as, fetchFn, now)
    if (!await firstUse(ctx, provider.name, claims, now)) throw new LogoutTokenError('replayed', 'This logout token was used already')
    let ended = 0
    try {
      for (const session of await upstreamSessions(ctx, provider.name, { sid: claims.sid, sub: claims.sub })) {
        if (await revokeFamily(ctx, session.family, session.userId, 'provider_logout', event)) ended++
      }
    }
    catch (error) {
      // The store failed part-way: the token may be delivered again (ending a session twice is harmless).
      await ctx.store.remove(jtiKey(ctx, provider.name, claims)).catch(() => {})
      throw error
    }
    return { ended }
  }
  catch (error) {
    if (!(error instanceof LogoutTokenError)) throw error
    // Anyone can post made-up tokens: one event per provider, reason and client each 5 minutes.
    await securityEvent(ctx, event, { type: 'logout', outcome: 'failure', actor: null, details: { provider: provider.name, via: 'backchannel', reason: error.reason }, aggregate: refusalWindow(ctx, event, `backchannel\0${provider.name}\0${error.reason}`) })
    throw authError('invalid_request', error.message)
  }
}
