import type { H3Error, H3Event } from 'h3'
import type { AuthClaims } from '../../../types/auth'
import { originalUserOf } from '../../../shared/original-user'
import type { AuthContext } from './context'
import { authError, message, type Message } from '../edge/errors'
import { bearerCandidate, parseBearer } from '../edge/route-rules'
import { isStale } from './stale-claims'

const CHECKED = Symbol.for('svc-auth:checked')
const REVOKED = Symbol.for('svc-auth:session-revoked')

/** Why a valid token was refused: its session ended, or its claims are stale ({@link isStale}). */
type Refusal = 'session_revoked' | 'session_stale'

type AuthEventContext = H3Event['context'] & { [CHECKED]?: Promise<AuthClaims | undefined>, [REVOKED]?: Refusal }

/** Verifies the bearer token once per request and fills `event.context.user` (never from the refresh cookie). */
export function authenticate(event: H3Event, ctx: AuthContext): Promise<AuthClaims | undefined> {
  const context = event.context as AuthEventContext
  if (context[CHECKED]) return context[CHECKED]
  const header = event.node.req.headers.authorization
  // A token verified before is found by the header's text alone (it passed parseBearer then).
  const candidate = bearerCandidate(header)
  const cached = candidate ? ctx.tokens.verifyCached(candidate) : undefined
  context[CHECKED] = cached ? accept(event, ctx, cached) : verifyToken(event, ctx, parseBearer(header))
  return context[CHECKED]
}

async function verifyToken(event: H3Event, ctx: AuthContext, token: string | undefined): Promise<AuthClaims | undefined> {
  const claims = token ? await ctx.tokens.verify(token) : null
  return claims ? accept(event, ctx, claims) : undefined
}

/** {@link acceptNow}, after a reload of the revoked set where it is loaded on demand and stale. */
function accept(event: H3Event, ctx: AuthContext, claims: AuthClaims): Promise<AuthClaims | undefined> {
  const reload = typeof claims.sid === 'string' ? ctx.revocations?.whenFresh() : undefined
  return reload ? reload.then(() => acceptNow(event, ctx, claims)) : Promise.resolve(acceptNow(event, ctx, claims))
}

/** Valid claims, unless their session has been revoked since (`sessions.revokeAccessTokens`) or they are stale. */
function acceptNow(event: H3Event, ctx: AuthContext, claims: AuthClaims): AuthClaims | undefined {
  const refusal = typeof claims.sid === 'string' && ctx.revocations?.isRevoked(claims.sid) ? 'session_revoked' : isStale(ctx, claims) ? 'session_stale' : undefined
  if (refusal) {
    (event.context as AuthEventContext)[REVOKED] = refusal
    return undefined
  }
  event.context.user = claims
  const original = originalUserOf(claims)
  if (original) event.context.originalUser = original
  return claims
}

/**
 * The 401 for a request {@link authenticate} refused: `session_revoked` for a valid token of an ended session,
 * `session_stale` for one issued before its user's claims changed (refresh and retry).
 */
export function authenticationError(event: H3Event, text: Message = message('unauthorized')): H3Error {
  const refusal = (event.context as AuthEventContext)[REVOKED]
  if (refusal === 'session_revoked') return authError('session_revoked')
  if (refusal === 'session_stale') return authError('session_stale')
  return authError('unauthorized', text)
}

/**
 * The verified claims of the request's bearer, else 401. With `notImpersonated`, an impersonated session is
 * refused: 403 `impersonated_session`.
 */
export async function requireCaller(event: H3Event, ctx: AuthContext, notImpersonated = false): Promise<AuthClaims> {
  const claims = await authenticate(event, ctx)
  if (!claims) throw authenticationError(event, message('missing_access_token'))
  if (notImpersonated && claims.impersonation) throw authError('impersonated_session')
  return claims
}
