import type { H3Event } from 'h3'
import type { LinkedIdentity } from '../identity-types'
import { requiredHandler } from '../../server/lib/core/handlers'
import { recordTypes } from '../../server/lib/store/record-types'
import { asSubject } from '../../server/lib/core/subject'
import { isRecord } from '../../shared/values'

/** Linked identities' record kinds (see store/record-types.ts). */
export const IDENTITY_RECORDS = recordTypes({
  /** The lease that serialises the links of one identity (`i\0<provider>\0<subject>`) and the changes of one user's ways in (`u\0<userId>`: links, unlinks, passkey deletions). */
  identityLock: 'identity-lock',
})

/** The identity handlers of the host, checked: each is required once `svcAuth.identities` is set. */
export interface ResolvedIdentityHandlers {
  findUserByIdentity(provider: string, subject: string): Promise<string | null>
  linkIdentity(identity: LinkedIdentity): Promise<void>
  unlinkIdentity(identity: Pick<LinkedIdentity, 'provider' | 'subject' | 'userId'>): Promise<void>
  listIdentities(userId: string): Promise<LinkedIdentity[]>
}

/** An identity as the host returned it, when it has the fields the module relies on. */
function isIdentity(value: unknown): value is LinkedIdentity {
  return isRecord(value) && typeof value.provider === 'string' && typeof value.subject === 'string' && value.subject !== '' && typeof value.userId === 'string'
}

/** Reads the registered handlers now (plugins may register them after the server started). */
export function identityHandlers(event: H3Event): ResolvedIdentityHandlers {
  const context = { event }
  return {
    async findUserByIdentity(provider, subject) {
      return asSubject(await requiredHandler('identities', 'findUserByIdentity')(provider, subject, context)) ?? null
    },
    async linkIdentity(identity) {
      await requiredHandler('identities', 'linkIdentity')(identity, context)
    },
    async unlinkIdentity(identity) {
      await requiredHandler('identities', 'unlinkIdentity')(identity, context)
    },
    async listIdentities(userId) {
      const list = await requiredHandler('identities', 'listIdentities')(userId, context)
      // Only the user's own: a host query that matched loosely lists nothing of another user.
      return Array.isArray(list) ? list.filter((i): i is LinkedIdentity => isIdentity(i) && i.userId === userId) : []
    },
  }
}
