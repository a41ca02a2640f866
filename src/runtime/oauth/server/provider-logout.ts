/** OpenID Connect RP-Initiated Logout 1.0: the provider's end-session URL of a session's login. */
import type { AuthContext } from '../../server/lib/core/context'
import type { UpstreamLogin } from '../../server/lib/core/records/record-schema'
import { authError, message } from '../../server/lib/edge/errors'
import { originOf } from '../../server/lib/edge/origin'
import { joinBase } from '../../shared/paths'
import type { ProviderFetch, ResolvedProvider } from './preset'
import { authorizationServerOf, guardedFetch } from './provider-http'
import { providerOf } from './provider-registry'
import { isAllowedProviderUrl } from './provider-url'

/** What the logout route passes on from its body. */
export interface ProviderLogoutRequest {
  /** One of the provider's `postLogoutRedirectUrls`, exactly; the first when absent. */
  postLogoutRedirectUri?: string
}

/**
 * The `post_logout_redirect_uri` URLs a provider may be given: its `postLogoutRedirectUrls`, else the app's
 * `redirect.logout` page at `publicUrl` (none without a public URL: a Host header never makes one).
 */
export function allowedPostLogoutUrls(ctx: Pick<AuthContext, 'options' | 'baseURL'>, provider: Pick<ResolvedProvider, 'postLogoutRedirectUrls'>): string[] {
  if (provider.postLogoutRedirectUrls.length) return provider.postLogoutRedirectUrls
  const origin = ctx.options.publicUrl ? originOf(ctx.options.publicUrl) : undefined
  return origin ? [`${origin}${joinBase(ctx.baseURL, ctx.options.redirect.logout)}`] : []
}

/** The chosen `post_logout_redirect_uri`: one listed exactly (400 `bad_request` otherwise), by default the first. */
function postLogoutTarget(allowed: string[], asked: string | undefined): string | undefined {
  if (asked === undefined) return allowed[0]
  if (!allowed.includes(asked)) throw authError('bad_request', message('post_logout_redirect_not_allowed'))
  return asked
}

/**
 * The URL that ends the session of `upstream` at its provider: its `end_session_endpoint` (discovered, the
 * preset's or `endSessionUrl`) with `id_token_hint`, `client_id` and `post_logout_redirect_uri` when one is
 * allowed. Undefined when the provider is no longer configured or has no end-session endpoint.
 */
export async function providerLogoutUrl(ctx: AuthContext, upstream: UpstreamLogin, request: ProviderLogoutRequest, fetchFn: ProviderFetch = guardedFetch()): Promise<string | undefined> {
  let provider: ResolvedProvider
  try {
    provider = providerOf(ctx, upstream.provider, undefined)
  }
  catch {
    return undefined
  }
  const target = postLogoutTarget(allowedPostLogoutUrls(ctx, provider), request.postLogoutRedirectUri)
  if (provider.local || !provider.openid) return undefined
  const origin = (ctx.options.publicUrl && originOf(ctx.options.publicUrl)) || 'http://localhost'
  const as = await authorizationServerOf(provider, origin, fetchFn)
  const endpoint = as.end_session_endpoint
  if (typeof endpoint !== 'string' || !isAllowedProviderUrl(endpoint)) return undefined
  const url = new URL(endpoint)
  url.searchParams.set('id_token_hint', upstream.idToken)
  url.searchParams.set('client_id', provider.clientId)
  if (target) url.searchParams.set('post_logout_redirect_uri', target)
  return url.href
}
