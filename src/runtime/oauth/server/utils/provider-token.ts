/** `getProviderToken` and `dropProviderTokens`: auto-imported in server code when a provider has `keepTokens`. */
import type { H3Event } from 'h3'
import { requireCaller } from '../../../server/lib/core/authenticate'
import { useAuthContext } from '../../../server/utils/auth-context'
import { dropKeptTokens } from '../token-vault'
import { providersKeepingTokens } from '../provider-registry'
import { providerAccessToken } from '../upstream-refresh'

/**
 * A valid access token of the provider `provider` for a user, to call its API: the kept one, or one refreshed
 * upstream when it expires within 30 seconds (one refresh at a time across requests and instances).
 *
 * The user is the request's authenticated caller (`event`: 401 without a valid access token, 403
 * `impersonated_session` when an administrator acts as the user), or `{ userId }` for a background job.
 * Errors: 409 `provider_not_linked` (nothing kept: the user never logged in with it, or logged out),
 * 409 `provider_link_broken` (the provider refused the refresh token: the user must log in with it again),
 * 502 `provider_unavailable` (the provider could not be reached or failed; the link stays). The token is a secret:
 * never send it to the browser or log it.
 * @example
 * const token = await getProviderToken(event, 'google')
 * const files = await $fetch('https://www.googleapis.com/drive/v3/files', { headers: { authorization: `Bearer ${token}` } })
 */
export async function getProviderToken(from: H3Event | { userId: string }, provider: string): Promise<string> {
  const ctx = await useAuthContext()
  if ('userId' in from) return providerAccessToken(ctx, from.userId, provider)
  const caller = await requireCaller(from, ctx, true)
  return providerAccessToken(ctx, caller.sub, provider, { event: from })
}

/** Removes the tokens kept for a user (at `provider`, or at every provider that keeps them): the user unlinked it, or their account is deleted. */
export async function dropProviderTokens(userId: string, provider?: string): Promise<void> {
  const ctx = await useAuthContext()
  const kept = providersKeepingTokens(ctx.options).map(p => p.name)
  await dropKeptTokens(ctx, userId, provider === undefined ? kept : kept.filter(name => name === provider))
}
