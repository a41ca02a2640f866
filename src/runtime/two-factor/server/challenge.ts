/** The second factor's step of the login pipeline: a pending login and a detour to the second-factor page. */
import type { H3Event } from 'h3'
import type { AuthUser, CustomClaims, ProviderTokens } from '../../types/auth'
import type { AuthContext } from '../../server/lib/core/context'
import type { UpstreamLogin } from '../../server/lib/core/records/record-schema'
import { withQueryParams } from '../../server/lib/edge/redirect'
import { createPendingLogin } from './two-factor-records'
import { emitHook } from '../../server/lib/core/handlers'
import { securityEvent } from '../../server/lib/edge/security-event'

export { secondFactorNeeded } from './two-factor-state'

export interface ChallengeInput {
  event: H3Event
  user: AuthUser & { sub: string }
  claims: CustomClaims
  provider: string
  tokens: ProviderTokens
  redirect?: string
  enrol: boolean
  /** The OpenID provider login, carried to the session the second factor starts. */
  upstream?: UpstreamLogin
}

/** The second-factor page of a pending login: `<secondFactorPath>?flow=<id>[&enrol=1]`. */
export function secondFactorLocation(ctx: AuthContext, flow: string, enrol: boolean): string {
  return withQueryParams(ctx.options.endpoints.secondFactorPath, enrol ? { flow, enrol: '1' } : { flow })
}

/** Stores the pending login (single use, `twoFactor.pendingLoginTTL`, browser-bound) and returns its flow id. */
export async function challengeSecondFactor(ctx: AuthContext, input: ChallengeInput): Promise<string> {
  const { event, user, claims, provider, tokens, redirect, enrol, upstream } = input
  const flow = await createPendingLogin(ctx, event, { userId: user.sub, user, claims, provider, tokens, redirect, enrol, upstream }, ctx.options.twoFactor.pendingLoginTTL)
  await securityEvent(ctx, event, { type: 'two_factor.challenged', actor: user.sub, details: { provider, enrol } })
  await emitHook(ctx, 'svc:twoFactor:challenged', { userId: user.sub, provider, enrol, event })
  return flow
}
