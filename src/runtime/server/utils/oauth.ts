import type { H3Event } from 'h3'
import { useNitroApp } from 'nitropack/runtime'
import type {
  Auth0EventHandlerOptions,
  CustomEventHandlerOptions,
  GitHubEventHandlerOptions,
  GoogleEventHandlerOptions,
  MicrosoftEventHandlerOptions,
  MockEventHandlerOptions,
  OAuthEventHandlerOptions,
} from '../../types/oauth'
import type { AuthContext } from '../lib/context'
import { handleOAuthRequest } from '../lib/oauth/flow'
import type { ProviderFetch } from '../lib/oauth/http'
import { defineAuthRoute } from './context'

/**
 * Requests to the mock provider's endpoints go to this very server in-process (no network, and
 * no dependence on how the app is reached from outside).
 */
const mockFetch: ProviderFetch = (url, init) => {
  const target = new URL(url)
  return useNitroApp().localFetch(`${target.pathname}${target.search}`, init)
}

/** Runs the provider login flow for `name` with the handlers of a host route. */
export function runOAuthLogin(event: H3Event, ctx: AuthContext, name: string, handlers?: OAuthEventHandlerOptions<object>): Promise<void> {
  return handleOAuthRequest(event, ctx, { name, handlers, mockFetch })
}

function createOAuthEventHandler(name: string, handlers: OAuthEventHandlerOptions<object>) {
  return defineAuthRoute((event, ctx) => runOAuthLogin(event, ctx, name, handlers))
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
  return createOAuthEventHandler(provider, handlers)
}

/** Google login route with host handlers (`server/routes/auth/google.get.ts`). */
export function defineOAuthGoogleEventHandler(options: GoogleEventHandlerOptions = {}) {
  return createOAuthEventHandler('google', options)
}

/** GitHub login route with host handlers (`server/routes/auth/github.get.ts`). */
export function defineOAuthGitHubEventHandler(options: GitHubEventHandlerOptions = {}) {
  return createOAuthEventHandler('github', options)
}

/** Auth0 login route with host handlers (`server/routes/auth/auth0.get.ts`). */
export function defineOAuthAuth0EventHandler(options: Auth0EventHandlerOptions = {}) {
  return createOAuthEventHandler('auth0', options)
}

/** Microsoft Entra ID login route with host handlers (`server/routes/auth/microsoft.get.ts`). */
export function defineOAuthMicrosoftEventHandler(options: MicrosoftEventHandlerOptions = {}) {
  return createOAuthEventHandler('microsoft', options)
}

/** Mock provider login route with host handlers (`server/routes/auth/mock.get.ts`). */
export function defineOAuthMockEventHandler(options: MockEventHandlerOptions = {}) {
  return createOAuthEventHandler('mock', options)
}
