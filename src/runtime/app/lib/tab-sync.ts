/**
 * The tabs of one browser share one session: one refresh at a time across them (Web Locks), and the new
 * access token or the logout handed to the others (BroadcastChannel). Pure: the lock and the channel are
 * passed in, so that tests give fakes.
 */
import type { RefreshOutcome } from './auth-fetch'
import { decodeTokenClaims } from './token-payload'

/** What a tab tells the others: a new access token, or that the session ended. Nothing else is ever sent. */
export type TabMessage = { kind: 'token', token: string } | { kind: 'logout' }

/** The part of `navigator.locks` used: the callback runs while this tab holds the lock `name`. */
export interface TabLocks {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>
}

/** The claims of `token` when it parses and has not expired (`exp`, in seconds, after `now`), else null. */
export function liveClaims(token: unknown, now = Date.now()) {
  const claims = decodeTokenClaims(token)
  return claims && Number(claims.exp) * 1000 > now ? claims : null
}

/**
 * True when a tab holding `current` takes `next` instead: `next` is a live token, issued after `current`
 * (or `current` is none or expired).
 */
export function isNewer(next: unknown, current: unknown, now = Date.now()): next is string {
  const claims = liveClaims(next, now)
  const old = liveClaims(current, now)
  return !!claims && (!old || Number(claims.iat) > Number(old.iat))
}

/** Another tab's message, or null unless it is one this module sends (a token must parse). */
export function tabMessageOf(data: unknown): TabMessage | null {
  const { kind, token } = (data ?? {}) as { kind?: unknown, token?: unknown }
  if (kind === 'logout') return { kind }
  return kind === 'token' && decodeTokenClaims(token) ? { kind, token: token as string } : null
}

/**
 * One refresh across the tabs: holding the lock `name` (at once without Web Locks), a token another tab
 * handed over since `before` (live and newer, see `isNewer`) is taken without a request; else `request` runs.
 */
export function lockedRefresh(locks: TabLocks | undefined, name: string, before: string | null, current: () => string | null, request: () => Promise<RefreshOutcome>): Promise<RefreshOutcome> {
  const run = async () => {
    const token = current()
    return isNewer(token, before) ? { token } : request()
  }
  return locks ? locks.request(name, run) : run()
}
