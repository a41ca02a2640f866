/**
 * `svc:login:newDevice`: a login from a client (browser family and network) the user has not been seen with.
 * Known clients are those of the user's other live sessions and of the earlier logins their activity keeps;
 * a user with neither (the first login the log knows of) announces nothing: there is nothing to compare with.
 */
import type { AuditEvent } from '../audit-types'
import type { AuthContext, SecurityEventDraft } from '../../server/lib/core/context'
import { listSessions } from '../../server/lib/core/session-list'
import { userActivity } from './user-activity'

type Client = AuditEvent['client']

const sameClient = (a: Client, b: Client) => a.family === b.family && a.addressPrefix === b.addressPrefix

/** The clients a user has been seen with, besides the login `login`: their other live sessions' and earlier logins'. */
async function knownClients(ctx: AuthContext, userId: string, login: AuditEvent): Promise<Client[]> {
  const [sessions, activity] = await Promise.all([listSessions(ctx, userId, { own: true }), userActivity(ctx, userId)])
  return [
    ...sessions.filter(session => session.id !== login.session).map(({ client }) => ({ family: client.userAgent ?? null, addressPrefix: client.address ?? null })),
    ...activity.filter(event => event.type === 'login' && event.outcome === 'success' && event.id !== login.id).map(event => event.client),
  ]
}

/** Emits `svc:login:newDevice` when the recorded event is a successful login from a client new to its user (hook errors are logged). */
export async function announceNewDevice(ctx: AuthContext, draft: SecurityEventDraft, login: AuditEvent): Promise<void> {
  const userId = login.subject ?? login.actor
  if (login.type !== 'login' || login.outcome !== 'success' || !draft.event || !userId || !login.session) return
  const known = await knownClients(ctx, userId, login)
  if (!known.length || known.some(client => sameClient(client, login.client))) return
  const provider = login.details.provider
  await ctx.callHook('svc:login:newDevice', {
    userId,
    sessionId: login.session,
    client: login.client,
    ...(typeof provider === 'string' ? { provider } : {}),
    event: draft.event,
  }).catch((error: unknown) => ctx.logger.error('The svc:login:newDevice hook failed (ignored)', error))
}
