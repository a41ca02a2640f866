import type { H3Event } from 'h3'
import { useNitroApp } from 'nitropack/runtime'
import type { CustomEventHandlerOptions, OAuthEventHandlerOptions } from '../oauth-types'
import type { AuthContext, IdentityLinkRequest } from '../../server/lib/core/context'
import { handleOAuthRequest, startLinkLogin } from './oauth-flow'
import type { ProviderFetch } from './preset'
import type { NativeReturn } from './oauth-state'
import { defineAuthRoute } from '../../server/utils/auth-context'

/** Requests to the mock provider's endpoints go to this server in process (no network). */
const localFetch: ProviderFetch = (url, init) => {
  const target = new URL(url)
  return useNitroApp().localFetch(`${target.pathname}${target.search}`, init)
}

/** Runs the provider login flow for `name` with the handlers of a host route (`native`: a native app's login starts). */
export function runOAuthLogin(event: H3Event, ctx: AuthContext, name: string, handlers?: OAuthEventHandlerOptions<object>, native?: NativeReturn): Promise<void> {
  return handleOAuthRequest(event, ctx, { name, handlers, localFetch, native })
}

/** Starts a signed-in user's link of the provider `name` (POST <authPath>/link/:provider): the provider's authorization URL. */
export function startProviderLink(event: H3Event, ctx: AuthContext, name: string, link: IdentityLinkRequest): Promise<string> {
  return startLinkLogin(event, ctx, { name, localFetch, link })
}

/** Login route of the provider `name` with host handlers: every generated `defineOAuth<Label>EventHandler` is this with the name filled in. */
export function defineOAuthProviderEventHandler<TConfig extends object>(name: string, options: OAuthEventHandlerOptions<TConfig> = {}) {
  return defineAuthRoute((ctx, event) => runOAuthLogin(event, ctx, name, options as OAuthEventHandlerOptions<object>))
}

/**
 * Login route of a custom provider with host handlers, e.g. `server/routes/auth/acme.get.ts`:
 *
 * ```ts
 * export default defineOAuthEventHandler({ provider: 'acme', customClaims: { plan: 'pro' } })
 * ```
 * It replaces the automatic route of that provider.
 */
export function defineOAuthEventHandler(options: CustomEventHandlerOptions) {
  const { provider, ...handlers } = options
  return defineOAuthProviderEventHandler(provider, handlers)
}
