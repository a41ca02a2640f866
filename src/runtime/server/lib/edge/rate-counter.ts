import type { EdgeContext } from './edge-context'
import type { RecordKey } from '../store/record-store'
import { recordTypes } from '../store/record-types'

/** The rate limits' record kind: a counter (see store/record-types.ts). */
export const RATE_RECORDS = recordTypes({ rateCounter: 'rate' })

/** Rate counter of a subject (`<rule>:ip:<address>`, `login-failed:<email>`, …), hashed like every record id. */
export function rateCounterKey(ctx: EdgeContext, subject: string): RecordKey {
  return ctx.store.key(RATE_RECORDS.rateCounter, subject)
}

export interface RateLimitHit {
  allowed: boolean
  /** Requests counted in the current window, this one included. */
  count: number
  /** Seconds until the window ends (when refused). */
  retryAfter: number
}

/** Counts a request of `subject` in a fixed window from its first request; past `max` it is refused. */
export async function hitRateLimit(ctx: EdgeContext, subject: string, max: number, windowSeconds: number): Promise<RateLimitHit> {
  const key = rateCounterKey(ctx, subject)
  const count = await ctx.store.incr(key, windowSeconds)
  if (count <= max) return { allowed: true, count, retryAfter: 0 }
  return { allowed: false, count, retryAfter: await retryAfterOf(ctx, key, windowSeconds) }
}

/** Whole seconds (at least 1) until the window of a counter ends. */
export async function retryAfterOf(ctx: EdgeContext, key: RecordKey, windowSeconds: number): Promise<number> {
  const ttl = await ctx.store.ttl(key)
  return Math.max(1, Math.ceil(ttl ?? windowSeconds))
}

export type Reservation
  = | { granted: true, release: () => Promise<void> }
  /** `key`: the counter whose limit is reached. */
    | { granted: false, key: RecordKey }

/** Takes one unit from each counter; if any would pass its `max`, none is granted. `release()` gives them back. */
export async function reserveUnits(ctx: EdgeContext, counters: ReadonlyArray<{ key: RecordKey, max: number }>, windowSeconds: number): Promise<Reservation> {
  const counts = await Promise.all(counters.map(c => ctx.store.incr(c.key, windowSeconds)))
  const release = async () => {
    await Promise.all(counters.map(c => ctx.store.incr(c.key, windowSeconds, -1)))
  }
  const exceeded = counters.find((c, i) => counts[i]! > c.max)
  if (!exceeded) return { granted: true, release }
  await release()
  return { granted: false, key: exceeded.key }
}
