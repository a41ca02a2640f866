/**
 * The tabs of one browser share one session: one refresh at a time across them (Web Locks), and the new
 * access token or the logout handed to the others (BroadcastChannel). Pure: the lock and the channel are
 * passed in, so that tests give fakes.
 */
import type { RefreshOutcome } from './auth-fetch'
import { decodeTokenClaims } from './token-payload'

/** What a tab tells the others: a new access token (a JWT), or `'logout'` (the session ended). Nothing else is ever sent. */
export type TabMessage = string

/** The part of `navigator.locks` used: the callback runs while this tab holds the lock `name`. */
export interface TabLocks {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>
}

/** The claims of `token` when it parses and has not expired (`exp`, in seconds), else null. */
export function liveClaims(token: unknown) {
  const claims = decodeTokenClaims(token)
  return claims && claims.exp! * 1000 > Date.now() ? claims : null
}

/**
 * True when a tab holding `current` takes `next` instead: `next` is a live token, issued after `current`
 * (or `current` is none or expired).
 */
export function isNewer(next: unknown, current: unknown): next is string {
  const claims = liveClaims(next)
  const old = liveClaims(current)
  return !!claims && (!old || claims.iat! > old.iat!)
}

/**
 * What a tab holding `current` does with another tab's message: `'logout'`, a newer token to take (see
 * `isNewer`), or null: ignore it (anything else, a token that does not parse, an older or expired one).
 */
export function readTabMessage(data: unknown, current: string | null): string | null {
  return data === 'logout' || isNewer(data, current) ? data : null
}

/**
 * One refresh across the tabs: holding the lock `name` (at once without Web Locks), a token another tab
 * handed over since the call (newer than the one `token` held then, see `isNewer`) is taken without a
 * request; else `request` runs.
 */
export function lockedRefresh(locks: TabLocks | undefined, name: string, token: { value: string | null }, request: () => Promise<RefreshOutcome>): Promise<RefreshOutcome> {
  const before = token.value
  const run = async () => {
    // The lock may come before the message the tab before sent ahead of letting it go: one task later it is in.
    await new Promise(resolve => setTimeout(resolve))
    return isNewer(token.value, before) ? { token: token.value } : request()
  }
  return locks ? locks.request(name, run) : run()
}
