/** POST `<authPath>/orgs/active`: the session of the bearer (and of the refresh cookie) switches organization. */
import type { AuthContext } from '../../server/lib/core/context'
import { requireCaller } from '../../server/lib/core/authenticate'
import { bearerSession, mintSessionToken, resolveGlobalClaims } from '../../server/lib/core/session-tokens'
import { authError, message } from '../../server/lib/edge/errors'
import { guarded } from '../../server/lib/edge/route-contract'
import { writeActiveOrganization } from './active-organization'
import { membershipOf } from './organization-service'
import { ORGANIZATION_ROUTES } from './organizations-routes'

/**
 * Checks the membership (404 for an organization the caller is not in, or a malformed id: isolation), stores
 * the choice for the session and answers an access token minted as a refresh does, with the new claims.
 */
export const switchOrganization = guarded(ORGANIZATION_ROUTES.active, async (ctx: AuthContext, event, { orgId }) => {
  const caller = await requireCaller(event, ctx, true)
  const session = await bearerSession(event, ctx, caller)
  if (!session) throw authError('invalid_refresh_token', message('refresh_cookie_other_session'))
  if (orgId !== null) await membershipOf(ctx, orgId, caller.sub)
  await writeActiveOrganization(ctx, session.family, orgId)
  const claims = await resolveGlobalClaims(ctx, session.user, session.claims)
  const { token, expiresIn } = await mintSessionToken(ctx, session, claims)
  return { accessToken: token, tokenType: 'Bearer' as const, expiresIn }
})
