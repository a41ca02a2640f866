/** A valid access token of a provider for a user: the kept one, or one refreshed upstream, once across instances. */
import * as oauth from 'oauth4webapi'
import type { H3Event } from 'h3'
import type { AuthContext } from '../../server/lib/core/context'
import { emitHook } from '../../server/lib/core/handlers'
import { authError } from '../../server/lib/edge/errors'
import { originOf } from '../../server/lib/edge/origin'
import { securityEvent } from '../../server/lib/edge/security-event'
import { oncePer } from '../../shared/values'
import type { ProviderFetch } from './preset'
import { authorizationServerOf, guardedFetch, httpOptions } from './provider-http'
import { keepTokensOf, providerOf } from './provider-registry'
import { readKeptTokens, underLease, writeKeptTokens, type KeptTokens } from './token-vault'

/** An access token expiring within this many seconds is refreshed first. */
export const EXPIRY_SKEW_SECONDS = 30

/** Origin of a provider's relative endpoints (only the mock has some; it keeps no tokens). */
const NO_ORIGIN = 'http://in-process.invalid'

/** Refreshes under way in this process, by record key: concurrent callers share one. */
const inFlight = oncePer((_ctx: AuthContext) => new Map<string, Promise<string>>())

const isFresh = (tokens: KeptTokens, now = Date.now()) => tokens.expiresAt === undefined || tokens.expiresAt - EXPIRY_SKEW_SECONDS * 1000 > now

/** How {@link providerAccessToken} reaches the provider. */
export interface UpstreamOptions {
  /** Fetch of the provider's endpoints (tests). @default the global fetch, guarded (https, no redirects, a timeout) */
  fetch?: ProviderFetch
  /** The request that asked, for the security event of a broken link. */
  event?: H3Event
}

/**
 * The user's valid access token at `provider`: the kept one while it is fresh, else one refreshed with the kept
 * refresh token. One refresh at a time per user and provider: callers of this process share one, other instances
 * wait on the lease and read its result. 409 `provider_not_linked` when nothing is kept, 409 `provider_link_broken`
 * once the provider refused the refresh token, 502 `provider_unavailable` when it could not refresh.
 */
export async function providerAccessToken(ctx: AuthContext, userId: string, provider: string, options: UpstreamOptions = {}): Promise<string> {
  if (!keepTokensOf(ctx.options, provider)) throw new Error(`[svc-auth] getProviderToken: provider "${provider}" does not keep tokens (set svcAuth.providers.${provider}.keepTokens).`)
  const kept = usable(await readKeptTokens(ctx, userId, provider))
  if (isFresh(kept)) return kept.accessToken
  const flights = inFlight(ctx)
  const id = `${provider}\0${userId}`
  let flight = flights.get(id)
  if (!flight) {
    flight = underLease(ctx, userId, provider, () => refreshIfStale(ctx, userId, provider, options))
      .finally(() => flights.delete(id))
    flights.set(id, flight)
  }
  return flight
}

/** The kept tokens, else the error that says why there are none to use. */
function usable(kept: KeptTokens | null): KeptTokens {
  if (!kept) throw authError('provider_not_linked')
  if (kept.broken) throw authError('provider_link_broken')
  return kept
}

/** Under the lease: the tokens another holder refreshed meanwhile, else a refresh upstream, stored before it is answered. */
async function refreshIfStale(ctx: AuthContext, userId: string, provider: string, options: UpstreamOptions): Promise<string> {
  const kept = usable(await readKeptTokens(ctx, userId, provider))
  if (isFresh(kept)) return kept.accessToken
  if (!kept.refreshToken) return markBroken(ctx, userId, provider, 'no_refresh_token', options.event)
  const result = await refreshUpstream(ctx, provider, kept.refreshToken, options)
  if (result === 'invalid_grant') return markBroken(ctx, userId, provider, 'invalid_grant', options.event)
  const now = Date.now()
  await writeKeptTokens(ctx, userId, provider, {
    accessToken: result.access_token,
    // A provider that rotates sends the new one; one that does not keeps the old one valid.
    refreshToken: result.refresh_token ?? kept.refreshToken,
    expiresAt: typeof result.expires_in === 'number' ? now + result.expires_in * 1000 : undefined,
    scope: result.scope ?? kept.scope,
    updatedAt: now,
  })
  return result.access_token
}

/** The refresh grant at the provider's token endpoint: its answer, `invalid_grant`, or 502 for any other failure. */
async function refreshUpstream(ctx: AuthContext, name: string, refreshToken: string, options: UpstreamOptions): Promise<oauth.TokenEndpointResponse | 'invalid_grant'> {
  const provider = providerOf(ctx, name, undefined)
  const fetchFn = guardedFetch(options.fetch)
  const client: oauth.Client = { client_id: provider.clientId }
  const auth = provider.tokenEndpointAuthMethod === 'client_secret_post' ? oauth.ClientSecretPost(provider.clientSecret) : oauth.ClientSecretBasic(provider.clientSecret)
  try {
    const as = await authorizationServerOf(provider, ctx.options.publicUrl ? originOf(ctx.options.publicUrl) ?? NO_ORIGIN : NO_ORIGIN, fetchFn)
    const response = await oauth.refreshTokenGrantRequest(as, client, auth, refreshToken, httpOptions(fetchFn))
    return await oauth.processRefreshTokenResponse(as, client, await withoutIdToken(response))
  }
  catch (error) {
    if (error instanceof oauth.ResponseBodyError && error.error === 'invalid_grant') return 'invalid_grant'
    ctx.logger.warn(`Refreshing the ${name} token failed`, describe(error))
    throw authError('provider_unavailable')
  }
}

/**
 * The answer without its id_token: nothing here reads one, and a refresh's id_token (Entra ID's names the user's
 * tenant as issuer) would fail a check that protects nothing.
 */
async function withoutIdToken(response: Response): Promise<Response> {
  if (!response.ok) return response
  const body = await response.clone().json().catch(() => undefined) as Record<string, unknown> | undefined
  if (!body || typeof body !== 'object' || !('id_token' in body)) return response
  const { id_token: _dropped, ...rest } = body
  return new Response(JSON.stringify(rest), { status: response.status, headers: response.headers })
}

/** A server-side description of a failure: no response body, no token. */
function describe(error: unknown): string {
  if (error instanceof oauth.ResponseBodyError) return `${error.error} (HTTP ${error.status})`
  return error instanceof Error ? error.message : String(error)
}

/** The provider refused the refresh token: the link is marked broken, reported (hook, security event) and refused. */
async function markBroken(ctx: AuthContext, userId: string, provider: string, reason: 'invalid_grant' | 'no_refresh_token', event?: H3Event): Promise<never> {
  await writeKeptTokens(ctx, userId, provider, { accessToken: '', broken: true, updatedAt: Date.now() })
  await securityEvent(ctx, event, { type: 'provider.link_broken', outcome: 'failure', actor: null, subject: userId, details: { provider, reason } })
  await emitHook(ctx, 'svc:provider:linkBroken', { userId, provider })
  throw authError('provider_link_broken')
}
