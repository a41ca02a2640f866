import type { H3Event } from 'h3'
import type { PasskeyCredential } from '../passkey-types'
import { getAuthHandlers, requiredHandler } from '../../server/lib/core/handlers'
import { isRecord } from '../../shared/values'

/** The passkey handlers of the host, checked: a missing required one is a clear configuration error. */
export interface ResolvedPasskeyHandlers {
  findCredential(credentialId: string): Promise<PasskeyCredential | null>
  /** True when the host's lookup returns any row for the id (also one matched loosely). */
  credentialExists(credentialId: string): Promise<boolean>
  listCredentials(userId: string): Promise<PasskeyCredential[]>
  saveCredential(credential: PasskeyCredential, created: boolean): Promise<void>
  deleteCredential?: (credentialId: string, userId: string) => Promise<void>
  /** Undefined when the host registered no `findUserIdByEmail` (email hints are then ignored). */
  findUserIdByEmail?: (email: string) => Promise<string | null>
  findUser?: (userId: string) => Promise<Record<string, unknown> | null>
}

/** A credential as the host returned it, when it has the fields the module relies on. */
function isCredential(value: unknown): value is PasskeyCredential {
  return isRecord(value) && typeof value.id === 'string' && typeof value.userId === 'string' && value.userId !== ''
    && typeof value.publicKey === 'string' && typeof value.counter === 'number' && Number.isInteger(value.counter) && value.counter >= 0
}

/** Reads the registered handlers now (plugins may register them after the server started). */
export function passkeyHandlers(event: H3Event): ResolvedPasskeyHandlers {
  const handlers = getAuthHandlers().passkey ?? {}
  const context = { event }
  const { deleteCredential, findUserIdByEmail, findUser } = handlers
  return {
    async findCredential(credentialId) {
      const found = await requiredHandler('passkey', 'findCredential')(credentialId, context)
      // Only the credential asked for: a host lookup that matched loosely finds nothing.
      return isCredential(found) && found.id === credentialId ? found : null
    },
    async credentialExists(credentialId) {
      return (await requiredHandler('passkey', 'findCredential')(credentialId, context)) != null
    },
    async listCredentials(userId) {
      const list = await requiredHandler('passkey', 'listCredentials')(userId, context)
      return Array.isArray(list) ? list.filter((c): c is PasskeyCredential => isCredential(c) && c.userId === userId) : []
    },
    async saveCredential(credential, created) {
      await requiredHandler('passkey', 'saveCredential')(credential, { ...context, created })
    },
    deleteCredential: deleteCredential && (async (credentialId, userId) => {
      await deleteCredential(credentialId, userId, context)
    }),
    findUserIdByEmail: findUserIdByEmail && (async (email) => {
      const id = await findUserIdByEmail(email, context)
      return typeof id === 'string' && id !== '' ? id : null
    }),
    findUser: findUser && (async (userId) => {
      const user = await findUser(userId, context)
      return isRecord(user) ? user : null
    }),
  }
}
