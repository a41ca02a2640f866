/**
 * Stale marks: after a change of what a user's tokens claim (a role in an organization), the tokens the
 * user holds are refused (401 `session_stale`) on every process, through the revocation list; the client
 * refreshes once and carries on with the new claims.
 */
import type { AuthClaims } from '../../../types/auth'
import type { AuthContext } from './context'

/** The HMAC purpose of a user's id in the list (the stored field: ids never appear in storage). */
const STALE_PURPOSE = 'stale-claims'

/**
 * Margin (ms) past the mark that tokens are still refused: a token whose claims were read before the change
 * and signed just after it (a refresh in flight) falls before the mark.
 */
const MARK_MARGIN_MS = 100

/**
 * Refuses the access tokens of `userId` issued until now on every process sharing the store (within a
 * second on Redis: broadcast), with 401 `session_stale`; tokens minted from now on are accepted (a mint waits
 * until the mark's time, at most about a second). Impersonated tokens are never stale. Call it after the change
 * is stored. Needs the revocation list (`sessions.revokeAccessTokens`, or a feature that marks claims stale).
 * @throws when the build has no revocation list, or the store fails (the mark is not stored then).
 */
export async function markClaimsStale(ctx: AuthContext, userId: string): Promise<void> {
  if (!ctx.revocations) throw new Error('[svc-auth] markClaimsStale needs the revocation list: sessions.revokeAccessTokens, or a feature that marks claims stale.')
  // `iat` is in whole seconds: the mark ends on a second boundary, so a token of the next second is not refused.
  const before = Math.ceil((Date.now() + MARK_MARGIN_MS) / 1000) * 1000
  await ctx.revocations.markStale(ctx.store.hash(STALE_PURPOSE, userId), before)
}

/** The time (ms) before which the tokens of `userId` are refused; undefined without a mark (no hashing then). */
function staleBefore(ctx: AuthContext, userId: string): number | undefined {
  const revocations = ctx.revocations
  return revocations?.hasStaleMarks() ? revocations.staleBefore(ctx.store.hash(STALE_PURPOSE, userId)) : undefined
}

/** True for the claims of a token issued before a stale mark of its user (impersonated tokens never are). */
export function isStale(ctx: AuthContext, claims: AuthClaims): boolean {
  if (claims.impersonation) return false
  const before = staleBefore(ctx, claims.sub)
  return before !== undefined && (typeof claims.iat !== 'number' || claims.iat * 1000 < before)
}

/** Waits until a token minted for `userId` would be past the user's stale mark (only right after one, about a second at most). */
export async function pastStaleMark(ctx: AuthContext, userId: string): Promise<void> {
  const before = staleBefore(ctx, userId)
  if (before === undefined) return
  // A timer may fire a millisecond before `Date.now()` says it is due: wait until it is.
  for (let wait = before - Date.now(); wait > 0; wait = before - Date.now()) await new Promise(resolve => setTimeout(resolve, wait + 1))
}
