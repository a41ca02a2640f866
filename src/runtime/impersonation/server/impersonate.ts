import type { H3Event } from 'h3'
import { getRequestHeader } from 'h3'
import type { AuthClaims, CustomClaims, ImpersonateFetchTargetPayload, ImpersonationContext } from '../../types/auth'
import { authenticate, authenticationError } from '../../server/lib/core/authenticate'
import { buildAccessClaims, RESERVED_CLAIMS, sanitizeCustomClaims } from '../../server/lib/core/claims'
import type { AuthContext } from '../../server/lib/core/context'
import { randomToken } from '../../server/lib/store/crypto'
import { authError, message, type Message } from '../../server/lib/edge/errors'
import { dispatch, emitHook } from '../../server/lib/core/handlers'
import { clientAddressOf } from '../../server/lib/edge/client-address'
import { liveSessionOf } from '../../server/lib/core/recent-login'
import { removeImpersonation, saveImpersonation, takeImpersonation } from './impersonation-record'
import { channelOf, continueSession, discardRefreshToken, issueRefreshToken, readRefreshToken, refreshLifetime, revokeFamily } from '../../server/lib/core/records/refresh-token'
import { mintSessionToken, readRefreshCookie, setRefreshCookie, withoutFeatureClaims } from '../../server/lib/core/session-tokens'
import { describeClient } from '../../server/lib/edge/client-description'
import { securityEvent } from '../../server/lib/edge/security-event'
import { asSubject, hostSubjectOf } from '../../server/lib/core/subject'

/** Characters of an impersonation's reason kept in its security event. */
const MAX_LOGGED_REASON = 200

/** Claims that describe identity or the token itself, not custom data. */
const STANDARD_CLAIMS = new Set<string>([...RESERVED_CLAIMS, 'email', 'name', 'picture', 'provider'])

/** What a caller asks for at POST /auth/impersonate. */
export interface ImpersonationRequest {
  /** Id or email of the user to impersonate, as `impersonation.fetchTarget` understands it. */
  targetUserId: string
  reason?: string
}

/** The custom claims of a token (everything but identity and token claims). */
export function customClaimsOf(claims: Record<string, unknown>): CustomClaims {
  const custom: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(claims)) {
    if (!STANDARD_CLAIMS.has(key)) custom[key] = value
  }
  return sanitizeCustomClaims(custom)
}

/** Identity of a host user row: the subject {@link hostSubjectOf} names, and non-empty `email`, `name`, `picture`, `provider`. */
export function identityOf(claims: Record<string, unknown>): { sub?: string, email?: string, name?: string, picture?: string, provider?: string } {
  const pick = (key: string) => (typeof claims[key] === 'string' && claims[key] ? claims[key] as string : undefined)
  return { sub: hostSubjectOf(claims), email: pick('email'), name: pick('name'), picture: pick('picture'), provider: pick('provider') }
}

/** The `impersonation` claim of a token issued for `requester`. */
export function impersonationContext(requester: AuthClaims, lookupClaim: string, reason: string | undefined, now: Date): ImpersonationContext {
  return {
    originalUserSub: requester.sub,
    originalUserLookupId: asSubject(requester[lookupClaim]) ?? requester.sub,
    ...(typeof requester.email === 'string' ? { originalUserEmail: requester.email } : {}),
    ...(typeof requester.name === 'string' ? { originalUserName: requester.name } : {}),
    impersonatedAt: now.toISOString(),
    ...(reason ? { reason } : {}),
    originalClaims: customClaimsOf(requester),
  }
}

/** Client address (X-Forwarded-For only from trusted proxies) and user agent, for the audit hooks. */
export function requestOrigin(event: H3Event, ctx: AuthContext): { ip: string, userAgent: string } {
  return {
    ip: clientAddressOf(ctx, event),
    userAgent: getRequestHeader(event, 'user-agent') ?? '',
  }
}

function requireEnabled(ctx: AuthContext): void {
  if (!ctx.options.impersonation.enabled) throw authError('not_found', message('impersonation_disabled'))
}

/** A user by id through `impersonation.fetchTarget` (and its hook when `hook`), with its identity; 404 when none. */
async function fetchUser(ctx: AuthContext, payload: ImpersonateFetchTargetPayload, notFound: Message, hook: boolean) {
  const { answer: user } = await dispatch(ctx, 'svc:impersonate:fetchTarget', payload, { hook })
  const identity = user ? identityOf(user) : undefined
  if (!user || !identity?.sub) throw authError('not_found', notFound)
  return { user, identity: { ...identity, sub: identity.sub } }
}

/** The caller of POST /auth/impersonate, with a live session to return to. */
export async function impersonationRequester(ctx: AuthContext, event: H3Event): Promise<AuthClaims & { sid: string }> {
  requireEnabled(ctx)
  const requester = await authenticate(event, ctx)
  if (!requester) throw authenticationError(event, message('missing_access_token'))
  if (requester.impersonation) throw authError('impersonation_chain')
  const session = await liveSessionOf(ctx, requester)
  if (!session) throw authError('session_revoked')
  return { ...requester, sid: session.id }
}

/** Starts impersonating; `svc:impersonate:start` runs before any token leaves: if it fails, all is rolled back. */
export async function startImpersonation(ctx: AuthContext, event: H3Event, requester: AuthClaims & { sid: string }, request: ImpersonationRequest): Promise<{ accessToken: string }> {
  const { targetUserId } = request
  const reason = request.reason || undefined
  const { ip, userAgent } = requestOrigin(event, ctx)
  await dispatch(ctx, 'svc:impersonate:check', { requester, targetUserId, reason, event, ip, userAgent })
  const { user: target, identity } = await fetchUser(ctx, { requester, targetUserId, event }, message('impersonation_target_not_found'), true)

  // The requester's refresh cookie, when this browser holds it, is retired below. A start with a bearer
  // alone (as a stolen token comes) leaves it: the way back then lives no longer than that access token.
  const previous = readRefreshCookie(event, ctx)
  const found = previous ? await readRefreshToken(ctx, previous) : null
  // A native session's token put in a cookie is no browser's: the start counts as one with a bearer alone.
  const fromSessionBrowser = found?.record.family === requester.sid && channelOf(found.record) === 'cookie'
  const notAfter = fromSessionBrowser ? found!.record.notAfter : (requester.exp ?? 0) * 1000
  // Its provider login goes back with it: the provider's logout and back-channel logout still find it.
  const upstream = fromSessionBrowser ? found!.record.upstream : undefined

  const now = new Date()
  const context = impersonationContext(requester, ctx.options.impersonation.originalUserLookupClaim, reason, now)
  // An impersonated token carries no claim a feature owns (no organization).
  const claims = withoutFeatureClaims(ctx, customClaimsOf(target))
  const ttl = ctx.lifetimes.impersonation
  const family = `imp_${randomToken(16)}`
  const session = await issueRefreshToken(ctx, { family, user: { ...target, ...identity }, userId: identity.sub, claims, provider: identity.provider, impersonation: context, client: describeClient(event, ctx), ttlSeconds: ttl })
  await saveImpersonation(ctx, { family, context, requester, requesterSession: requester.sid, ...(notAfter === undefined ? {} : { notAfter }), ...(upstream ? { upstream } : {}), targetSub: identity.sub, startedAt: now.getTime(), expiresAt: now.getTime() + ttl * 1000 })
  const payload = buildAccessClaims(identity, identity.provider, claims, { sid: family, impersonation: context })
  const { token, payload: targetUser } = await ctx.tokens.sign(payload, { expiresIn: ttl })

  try {
    await emitHook(ctx, 'svc:impersonate:start', { requester, targetUser, reason, event, ip, userAgent, timestamp: now })
  }
  catch (error) {
    await revokeFamily(ctx, family, identity.sub, 'impersonation')
    await removeImpersonation(ctx, family)
    throw error
  }

  if (fromSessionBrowser) await discardRefreshToken(ctx, previous!)
  setRefreshCookie(event, ctx, session.token, ttl)
  await securityEvent(ctx, event, { type: 'impersonation.started', actor: requester.sub, subject: identity.sub, session: family, details: { reason: reason?.slice(0, MAX_LOGGED_REASON) } })
  return { accessToken: token }
}

/**
 * Ends the impersonation of the bearer token: the requester continues their own session (never a new one),
 * capped by `notAfter`. `svc:impersonate:end` runs before anything is handed out; on failure the impersonation stays.
 */
export async function endImpersonation(ctx: AuthContext, event: H3Event): Promise<{ accessToken: string }> {
  requireEnabled(ctx)
  const impersonated = await authenticate(event, ctx)
  if (!impersonated) throw authenticationError(event, message('missing_access_token'))
  if (!impersonated.impersonation || typeof impersonated.sid !== 'string') throw authError('not_impersonating')

  const cookie = readRefreshCookie(event, ctx)
  const session = cookie ? await readRefreshToken(ctx, cookie) : null
  if (!session || !session.record.impersonation || session.record.family !== impersonated.sid) {
    throw authError('impersonation_session_mismatch')
  }
  const record = await takeImpersonation(ctx, impersonated.sid)
  if (!record) throw authError('impersonation_ended')

  try {
    const { user: original, identity } = await fetchUser(ctx, { requester: impersonated, targetUserId: record.context.originalUserLookupId, event }, message('original_user_not_found'), false)
    if (identity.sub !== record.requester.sub) throw authError('not_found', message('original_user_not_found'))
    const claims = { ...customClaimsOf(original), ...(record.context.originalClaims ?? {}) }
    const resumed = await continueSession(ctx, record.requesterSession, { user: { ...original, ...identity }, userId: identity.sub, claims, notAfter: record.notAfter, upstream: record.upstream })
    if (!resumed) throw authError('session_revoked', message('impersonation_origin_ended'))
    // Minted as a refresh does: the features' claims of the requester's session (its organization) come back.
    const { token, payload: restoredUser } = await mintSessionToken(ctx, resumed.record, claims)
    const { ip, userAgent } = requestOrigin(event, ctx)
    try {
      await emitHook(ctx, 'svc:impersonate:end', { restoredUser, impersonatedUser: impersonated, event, ip, userAgent, timestamp: new Date() })
    }
    catch (error) {
      await discardRefreshToken(ctx, resumed.token)
      throw error
    }
    await revokeFamily(ctx, session.record.family, session.record.userId, 'impersonation')
    setRefreshCookie(event, ctx, resumed.token, refreshLifetime(ctx, resumed.record))
    await securityEvent(ctx, event, { type: 'impersonation.ended', actor: identity.sub, subject: impersonated.sub, session: impersonated.sid })
    return { accessToken: token }
  }
  catch (error) {
    // Nothing was handed out: the impersonation stays as it was and can be ended again.
    await saveImpersonation(ctx, record)
    throw error
  }
}
