// The part of oidc-provider's API the tests use (the package ships no type declarations).
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http'

  export interface ClientMetadata {
    client_id: string
    client_secret?: string
    redirect_uris: string[]
    grant_types?: string[]
    response_types?: string[]
    token_endpoint_auth_method?: string
    post_logout_redirect_uris?: string[]
    backchannel_logout_uri?: string
    backchannel_logout_session_required?: boolean
  }

  export interface Account {
    accountId: string
    claims(use: string, scope: string): Record<string, unknown> | Promise<Record<string, unknown>>
  }

  export interface Configuration {
    clients?: ClientMetadata[]
    findAccount?: (ctx: unknown, id: string) => Account | undefined | Promise<Account | undefined>
    claims?: Record<string, string[]>
    features?: Record<string, { enabled: boolean }>
    interactions?: { url(ctx: unknown, interaction: { uid: string }): string }
    pkce?: { required(): boolean }
    cookies?: { keys: string[] }
    conformIdTokenClaims?: boolean
    jwks?: { keys: Array<Record<string, unknown>> }
    ttl?: Record<string, number>
    /** The fetch of the provider's own requests (its default refuses loopback and private addresses). */
    fetch?: (url: string | URL, options: RequestInit & { dispatcher?: unknown }) => Promise<Response>
  }

  export interface InteractionDetails {
    uid: string
    params: Record<string, string | undefined>
    prompt: { name: string }
  }

  export interface Grant {
    addOIDCScope(scope: string): void
    save(): Promise<string>
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration)
    callback(): (req: IncomingMessage, res: ServerResponse) => void
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>
    Grant: new (properties: { accountId: string, clientId: string }) => Grant
  }
}
