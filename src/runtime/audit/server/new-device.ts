/**
 * `svc:login:newDevice`: a login from a client (browser family and network) the user has not logged in from.
 * The clients each user has logged in from are a small map in the module's store (by a keyed hash, kept for
 * the log's retention), so the check is one read (and a write for a client not seen within the day) whatever the number of sessions or events. A
 * user with none (the first login the log knows of) announces nothing: there is nothing to compare with.
 */
import { z } from 'zod'
import type { AuditEvent } from '../audit-types'
import type { AuthContext, SecurityEventDraft } from '../../server/lib/core/context'
import { recordTypes } from '../../server/lib/store/record-types'
import { localizedEmail } from '../../server/lib/core/locale-of'

/** The clients users have logged in from. */
export const DEVICE_RECORDS = recordTypes({
  /** Map of a user's login clients: hash(family, network) → when last seen. */
  loginClients: 'audit-clients',
})

const seenAt = z.number()

/** A known client's entry is written again (its expiry moved on) when it was last written longer ago than this. */
const RESEEN_MS = 86_400_000

/** Emits `svc:login:newDevice` when the recorded event is a successful login from a client new to its user (hook errors are logged). */
export async function announceNewDevice(ctx: AuthContext, draft: SecurityEventDraft, login: AuditEvent, ttlSeconds: number): Promise<void> {
  const userId = login.subject ?? login.actor
  if (login.type !== 'login' || login.outcome !== 'success' || !draft.event || !userId || !login.session) return
  const key = ctx.store.key(DEVICE_RECORDS.loginClients, userId)
  const field = ctx.store.hash('audit-login-client', `${login.client.family ?? ''}\0${login.client.addressPrefix ?? ''}`)
  const known = await ctx.store.mapEntries(key, seenAt)
  const now = Date.parse(login.at)
  const same = known.find(entry => entry.field === field)
  // A client seen within the day is not written again: most logins cost one read.
  if (!same || now - same.value > RESEEN_MS) await ctx.store.mapSet(key, field, now, ttlSeconds)
  if (!known.length || same) return
  const provider = login.details.provider
  const email = await localizedEmail(ctx, draft.event, 'new_device', {})
  await ctx.callHook('svc:login:newDevice', {
    userId,
    sessionId: login.session,
    client: login.client,
    ...(typeof provider === 'string' ? { provider } : {}),
    event: draft.event,
    ...email,
  }).catch((error: unknown) => ctx.logger.error('The svc:login:newDevice hook failed (ignored)', error))
}
