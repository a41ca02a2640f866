import { z } from 'zod'
import type { AuthContext } from '../context'
import { CORE_RECORDS } from './core-records'
import type { UpstreamLogin } from './record-schema'

export { upstreamLoginSchema, type UpstreamLogin } from './record-schema'

/** One of our sessions an index entry names. */
export interface UpstreamSession {
  family: string
  userId: string
}

const indexEntry = z.object({ userId: z.string().min(1), sub: z.string().min(1) })

/** Longest provider `sid` or `sub` indexed (longer ones are not indexed: a logout cannot name them). */
const MAX_ID = 512

const sidKey = (ctx: AuthContext, provider: string, sid: string) => ctx.store.key(CORE_RECORDS.upstreamSid, `${provider}\0${sid}`)
const subKey = (ctx: AuthContext, provider: string, sub: string) => ctx.store.key(CORE_RECORDS.upstreamSub, `${provider}\0${sub}`)

/**
 * Seconds an index entry lives: twice the session's idle lifetime (refresh tokens), renewed by a rotation
 * once half of it has passed, so it outlives every token of the session; the access token's lifetime when
 * sessions are not refreshed.
 */
export function indexLifetime(ctx: AuthContext): number {
  return ctx.options.tokenRefresh.enabled ? 2 * ctx.lifetimes.refresh : ctx.lifetimes.access
}

/** True when a rotation at `now` should write the indexes of `upstream` again. */
export function upstreamIndexDue(ctx: AuthContext, upstream: UpstreamLogin | undefined, now: number): upstream is UpstreamLogin {
  return !!upstream && now - (upstream.indexedAt ?? 0) > (indexLifetime(ctx) * 1000) / 2
}

/**
 * Indexes a session under its provider's `sid` and `sub` (before its first token is stored: a back-channel
 * logout arriving meanwhile finds it). Returns the login with `indexedAt`, to keep with the session.
 */
export async function indexUpstreamLogin(ctx: AuthContext, session: UpstreamSession, upstream: UpstreamLogin, now = Date.now()): Promise<UpstreamLogin> {
  const ttl = indexLifetime(ctx)
  const value = { userId: session.userId, sub: upstream.sub }
  const writes: Array<Promise<void>> = []
  if (upstream.sub.length <= MAX_ID) writes.push(ctx.store.mapSet(subKey(ctx, upstream.provider, upstream.sub), session.family, value, ttl))
  if (upstream.sid && upstream.sid.length <= MAX_ID) writes.push(ctx.store.mapSet(sidKey(ctx, upstream.provider, upstream.sid), session.family, value, ttl))
  await Promise.all(writes)
  return { ...upstream, indexedAt: now }
}

/**
 * Our sessions that a provider's logout names: by its `sid` (of that `sub` when given too), else every
 * session of its `sub`. Sessions that ended since stay listed until their entry expires (ending one again is
 * harmless).
 */
export async function upstreamSessions(ctx: AuthContext, provider: string, ids: { sid?: string, sub?: string }): Promise<UpstreamSession[]> {
  const { sid, sub } = ids
  if ((sid && sid.length > MAX_ID) || (sub && sub.length > MAX_ID)) return []
  const key = sid ? sidKey(ctx, provider, sid) : sub ? subKey(ctx, provider, sub) : undefined
  if (!key) return []
  const entries = await ctx.store.mapEntries(key, indexEntry)
  return entries
    .filter(entry => sub === undefined || entry.value.sub === sub)
    .map(entry => ({ family: entry.field, userId: entry.value.userId }))
}
