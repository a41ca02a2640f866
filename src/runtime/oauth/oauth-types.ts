import type { H3Event } from 'h3'
import type { ProviderLoginHandlers } from '../types/auth'
import type { BuiltInOAuthProvider, CustomProviderOptions, MockProviderOptions, OAuthProviderOptionsOf } from '../types/providers'

/**
 * Stable `error` codes of a failed provider login (query of the redirect to `redirect.error`).
 * An error the provider itself reports (`access_denied`, `invalid_scope`, …) is passed through.
 */
export type OAuthLoginErrorCode
  = | 'invalid_request'
    | 'invalid_state'
    | 'token_exchange_failed'
    | 'invalid_id_token'
    | 'userinfo_failed'
    | 'login_failed'
    | 'provider_unavailable'
    | 'server_error'
    | (string & {})

/** Payload of a provider handler's `onError`. */
export interface OAuthErrorPayload {
  /** Provider name (`google`, `mock`, a custom name). */
  provider: string
  /** Stable code, also sent as `error` in the redirect. */
  error: OAuthLoginErrorCode
  /** Human-readable text, also sent as `error_description`. */
  errorDescription: string
  /** Where the login failed. */
  stage: 'start' | 'provider' | 'state' | 'exchange' | 'id_token' | 'userinfo' | 'login'
  /** The underlying error (server side only; never sent to the browser). */
  cause?: unknown
  event: H3Event
}

/** Options of `defineOAuth<Provider>EventHandler`. */
export interface OAuthEventHandlerOptions<TConfig> extends ProviderLoginHandlers {
  /** Provider options merged over `svcAuth.providers.<name>` (server side only). */
  config?: Partial<TConfig>
  /**
   * Called when the login fails, before the redirect to `redirect.error`. If it sends its own
   * answer (e.g. `sendRedirect`), that answer is kept.
   */
  onError?: (payload: OAuthErrorPayload) => void | Promise<void>
}

/** Options of the `defineOAuth<Label>EventHandler` of a built-in provider, e.g. `OAuthPresetEventHandlerOptions<'keycloak'>`. */
export type OAuthPresetEventHandlerOptions<K extends BuiltInOAuthProvider> = OAuthEventHandlerOptions<OAuthProviderOptionsOf<K>>

export type MockEventHandlerOptions = OAuthEventHandlerOptions<MockProviderOptions>

/** Options of `defineOAuthEventHandler` for a custom provider. */
export interface CustomEventHandlerOptions extends OAuthEventHandlerOptions<CustomProviderOptions> {
  /** Name of the provider in `svcAuth.providers.custom` (or a new one fully given in `config`). */
  provider: string
}
