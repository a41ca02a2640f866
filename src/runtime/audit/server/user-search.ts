/** The admin page's search: a user by email (the host's password `findUser`) or by id (as typed). */
import type { AuthContext } from '../../server/lib/core/context'
import { getAuthHandlers } from '../../server/lib/core/handlers'
import { listSessions } from '../../server/lib/core/session-list'
import { normalizeEmail } from '../../server/lib/edge/email'
import { passwordSubject } from '../../password/server/password-handlers'
import type { AuditAdminUser } from '../admin-types'

/** The account of an email through the host's password `findUser`, as its subject; none without the handler. */
async function byEmail(email: string): Promise<{ id: string, email: string } | undefined> {
  const findUser = getAuthHandlers().password?.findUser
  const user = findUser ? await findUser(email) : undefined
  return user && typeof user === 'object' ? { id: passwordSubject(user, email), email } : undefined
}

/**
 * The users `query` names: an email's password account, and the query itself as a user id when it is not an
 * email or when it has live sessions (hosts whose ids are addresses); nobody for an empty query. No host handler
 * lists users: a user without a password account is found by id.
 */
export async function findUsers(ctx: AuthContext, query: string): Promise<AuditAdminUser[]> {
  if (!query) return []
  const email = normalizeEmail(query)
  const account = email ? await byEmail(email) : undefined
  const ids = [...new Set([...(account ? [account.id] : []), query])]
  const counts = await Promise.all(ids.map(async id => (await listSessions(ctx, id)).length))
  return ids.flatMap((id, i) => {
    if (account?.id === id) return [{ id, email: account.email, sessions: counts[i]! }]
    return !email || counts[i]! > 0 ? [{ id, sessions: counts[i]! }] : []
  })
}
