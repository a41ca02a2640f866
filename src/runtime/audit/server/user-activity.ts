/**
 * Each user's latest security events (`GET <authPath>/me/activity`): a map per user in the module's store,
 * written as events are recorded and pruned on write, so reading it is one read whatever the size of the log.
 */
import { z } from 'zod'
import type { AuditEvent, ChainedAuditEvent } from '../audit-types'
import type { AuthContext } from '../../server/lib/core/context'
import { randomBelow } from '../../server/lib/store/crypto'
import { recordTypes } from '../../server/lib/store/record-types'
import { withoutChain } from './audit-chain'
import { auditEventSchema } from './audit-event-schema'

/** Users' activity in the module's store. */
export const ACTIVITY_RECORDS = recordTypes({
  /** Map of a user's latest events: event id → the event and its `seq`. */
  userActivity: 'audit-activity',
})

/** How many of a user's latest events their activity keeps (a few more for a moment under concurrent writes). */
export const ACTIVITY_KEPT = 100

/** One write in this many (at random) prunes a user's map to its newest {@link ACTIVITY_KEPT}: bounded without a read per write. */
const PRUNE_EVERY = 8

/** Events in one answer of `GET <authPath>/me/activity`. */
const ACTIVITY_PAGE = 50

const storedEvent = auditEventSchema.extend({ seq: z.number().int().positive() })
type StoredEvent = z.output<typeof storedEvent>

const activityKey = (ctx: AuthContext, userId: string) => ctx.store.key(ACTIVITY_RECORDS.userActivity, userId)

/** A user's stored events, newest first (a few more than {@link ACTIVITY_KEPT} between prunes). */
async function storedActivity(ctx: AuthContext, userId: string): Promise<Array<{ field: string, value: StoredEvent }>> {
  const entries = await ctx.store.mapEntries(activityKey(ctx, userId), storedEvent)
  return entries.sort((a, b) => b.value.seq - a.value.seq)
}

/** The users an event is about: who acted, whom it concerns and who impersonated (each once). */
function usersOf(event: AuditEvent): string[] {
  return [...new Set([event.actor, event.subject, event.impersonator].filter((user): user is string => typeof user === 'string' && user !== ''))]
}

/**
 * Adds a stored event to the activity of each of its users, for `ttlSeconds` (the log's retention); now and
 * then each user's oldest events beyond {@link ACTIVITY_KEPT} are removed.
 */
export async function indexUserActivity(ctx: AuthContext, event: ChainedAuditEvent, ttlSeconds: number): Promise<void> {
  const value: StoredEvent = { ...withoutChain(event), seq: event.seq }
  await Promise.all(usersOf(event).map(async (userId) => {
    const key = activityKey(ctx, userId)
    await ctx.store.mapSet(key, event.id, value, ttlSeconds)
    if (randomBelow(PRUNE_EVERY) !== 0) return
    const surplus = (await storedActivity(ctx, userId)).slice(ACTIVITY_KEPT)
    await Promise.all(surplus.map(({ field }) => ctx.store.mapDelete(key, field)))
  }))
}

/** A page of a user's activity before `cursor` (a `seq`), newest first, and the cursor of the next page. */
export async function activityPage(ctx: AuthContext, userId: string, cursor?: string): Promise<{ events: AuditEvent[], cursor?: string }> {
  const before = cursor === undefined ? Number.POSITIVE_INFINITY : Number(cursor)
  const older = (await storedActivity(ctx, userId)).slice(0, ACTIVITY_KEPT).filter(({ value }) => value.seq < before)
  const page = older.slice(0, ACTIVITY_PAGE).map(({ value: { seq: _seq, ...event } }) => event)
  return older.length > ACTIVITY_PAGE ? { events: page, cursor: String(older[ACTIVITY_PAGE - 1]!.value.seq) } : { events: page }
}
