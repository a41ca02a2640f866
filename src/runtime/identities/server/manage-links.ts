/** The caller's linked identities (bearer): starting a link, listing them, unlinking one. */
import type { H3Event } from 'h3'
import { getRouterParam } from 'h3'
import type { AuthClaims } from '../../types/auth'
import type { LinkedAccountsAnswer } from '../identity-types'
import type { AuthContext } from '../../server/lib/core/context'
import { requireCaller } from '../../server/lib/core/authenticate'
import { requireRecentLogin } from '../../server/lib/core/recent-login'
import { authError, message } from '../../server/lib/edge/errors'
import { guarded } from '../../server/lib/edge/route-contract'
import { OAuthLoginError } from '../../oauth/server/exchange'
import { startProviderLink } from '../../oauth/server/event-handlers'
import { oauthProviderNames } from '../../oauth/server/provider-registry'
import { identityHandlers } from './identity-handlers'
import { unlinkProvider } from './identity-links'
import { otherLoginMethods } from './login-methods'
import { IDENTITY_ROUTES } from './identities-routes'

const owner = (ctx: AuthContext, event: H3Event): Promise<AuthClaims> => requireCaller(event, ctx, true)

/** The caller, when their login is recent: a stolen older token can neither plant nor remove a way to log in. */
const recentOwner = (action: string) => async (ctx: AuthContext, event: H3Event): Promise<AuthClaims> => {
  const claims = await owner(ctx, event)
  await requireRecentLogin(ctx, event, claims, action)
  return claims
}

/** The `:provider` of the path when it is a configured OAuth provider (the mock only where it serves), else 404. */
function providerParam(ctx: AuthContext, event: H3Event): string {
  const name = getRouterParam(event, 'provider', { decode: true }) ?? ''
  if (!oauthProviderNames(ctx.options.providers).includes(name)) throw authError('not_found', message('unknown_login_provider'))
  return name
}

/** POST link/:provider `{ redirect? }` → `{ redirect }`: the provider's authorization URL, its state bound to this browser. */
export const startLink = guarded(IDENTITY_ROUTES.link, async (ctx: AuthContext, event, body, caller) => {
  const name = providerParam(ctx, event)
  const link = { userId: caller.sub, ...(typeof caller.sid === 'string' ? { sid: caller.sid } : {}), redirect: body.redirect ?? ctx.options.redirect.success }
  try {
    return { redirect: await startProviderLink(event, ctx, name, link) }
  }
  catch (error) {
    if (!(error instanceof OAuthLoginError)) throw error
    if (error.code === 'provider_unavailable') throw authError('provider_unavailable', message('provider_unreachable'))
    ctx.logger.error(`Starting a link of ${name} failed`, error.reason ?? error)
    throw authError('internal_error')
  }
}, recentOwner('identity_link'))

/** A host's `linkedAt` (an ISO string, or a Date from its database) as ISO 8601; the epoch when unreadable. */
function isoDate(value: string | Date): string {
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? new Date(0).toISOString() : date.toISOString()
}

/** GET links → the caller's linked identities and their other ways to log in. */
export const listLinks = guarded(IDENTITY_ROUTES.list, async (ctx: AuthContext, event): Promise<LinkedAccountsAnswer> => {
  const caller = await owner(ctx, event)
  const [identities, others] = await Promise.all([identityHandlers(event).listIdentities(caller.sub), otherLoginMethods(ctx, event, caller)])
  const links = identities.map(({ provider, email, linkedAt }) => ({ provider, ...(typeof email === 'string' ? { email } : {}), linkedAt: isoDate(linkedAt) }))
  return { links, password: others.password > 0, magicLink: others.magicLink > 0, passkeys: others.passkeys }
})

/** DELETE links/:provider → `{ success: true }`, unless it is the caller's last way to log in. */
export const unlink = guarded(IDENTITY_ROUTES.unlink, async (ctx: AuthContext, event, _input, caller) => {
  await unlinkProvider(ctx, event, caller, getRouterParam(event, 'provider', { decode: true }) ?? '')
  return { success: true as const }
}, recentOwner('identity_unlink'))
