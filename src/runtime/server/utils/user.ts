import type { H3Event } from 'h3'
import type { AuthClaims, OriginalUser } from '../../types/auth'
import type { AuthContext } from '../lib/context'
import { authError } from '../lib/errors'
import { parseBearer } from '../lib/route-rules'
import { useAuthContext } from './context'

const CHECKED = Symbol.for('svc-auth:checked')

type AuthEventContext = H3Event['context'] & { [CHECKED]?: Promise<AuthClaims | undefined> }

function originalUserOf(claims: AuthClaims): OriginalUser | undefined {
  const imp = claims.impersonation
  if (!imp || typeof imp.originalUserSub !== 'string') return undefined
  return { sub: imp.originalUserSub, email: imp.originalUserEmail, name: imp.originalUserName }
}

/**
 * Verifies the request's bearer token once per request and fills `event.context.user` (and
 * `event.context.originalUser` while impersonating). The refresh cookie is never accepted here.
 */
export function authenticate(event: H3Event, ctx: AuthContext): Promise<AuthClaims | undefined> {
  const context = event.context as AuthEventContext
  if (context[CHECKED]) return context[CHECKED]
  const token = parseBearer(event.node.req.headers.authorization)
  const cached = token ? ctx.tokens.verifyCached(token) : undefined
  context[CHECKED] = cached ? Promise.resolve(accept(event, cached)) : verifyToken(event, ctx, token)
  return context[CHECKED]
}

async function verifyToken(event: H3Event, ctx: AuthContext, token: string | undefined): Promise<AuthClaims | undefined> {
  const claims = token ? await ctx.tokens.verify(token) : null
  return claims ? accept(event, claims) : undefined
}

function accept(event: H3Event, claims: AuthClaims): AuthClaims {
  event.context.user = claims
  const original = originalUserOf(claims)
  if (original) event.context.originalUser = original
  return claims
}

/** The authenticated user of the request (claims of its bearer token), or undefined. */
export async function getAuthUser(event: H3Event): Promise<AuthClaims | undefined> {
  return authenticate(event, await useAuthContext())
}

/** The authenticated user, or a 401 `{ statusCode, message, error: 'unauthorized' }`. */
export async function requireAuthUser(event: H3Event): Promise<AuthClaims> {
  const user = await getAuthUser(event)
  if (!user) throw authError(401, 'unauthorized', 'Authentication required')
  return user
}
