/** The user's own passkeys: listing and deleting them (bearer-authenticated). */
import type { H3Event } from 'h3'
import type { PasskeyInfo } from '../passkey-types'
import type { AuthContext } from '../../server/lib/core/context'
import { authError } from '../../server/lib/edge/errors'
import { requireRecentLogin } from '../../server/lib/core/recent-login'
import { refuseCrossOrigin } from '../../server/lib/edge/request-guards'
import { passkeyIdSchema } from '../../server/lib/edge/request-schemas'
import { passkeyInfo, requirePasskeyOwner } from './passkey-credentials'
import { passkeyHandlers } from './passkey-handlers'
import { usePasskeyRuntime } from './passkey-runtime'
import { emitHook } from '../../server/lib/core/handlers'

const newestFirst = (a: PasskeyInfo, b: PasskeyInfo) => b.createdAt.localeCompare(a.createdAt)

/** GET credentials: the caller's passkeys, newest first. */
export async function listPasskeys(ctx: AuthContext, event: H3Event): Promise<{ credentials: PasskeyInfo[] }> {
  const owner = await requirePasskeyOwner(event, ctx)
  usePasskeyRuntime(ctx)
  const credentials = await passkeyHandlers(event).listCredentials(owner.sub)
  return { credentials: credentials.map(passkeyInfo).sort(newestFirst) }
}

/**
 * DELETE credentials/:id: one of the caller's passkeys, through the host's `deleteCredential`,
 * then `svc:passkey:deleted`. Another user's id, an unknown one, and a host without
 * `deleteCredential` answer 404 alike; a session that did not log in recently gets 403
 * `reauthentication_required` (a stolen token cannot strip the user of their passkeys).
 */
export async function deletePasskey(ctx: AuthContext, event: H3Event, rawId: string | undefined): Promise<{ success: true }> {
  refuseCrossOrigin(event, ctx)
  const owner = await requirePasskeyOwner(event, ctx)
  usePasskeyRuntime(ctx)
  const handlers = passkeyHandlers(event)
  const id = passkeyIdSchema.safeParse(rawId)
  const owned = id.success && handlers.deleteCredential ? (await handlers.listCredentials(owner.sub)).find(c => c.id === id.data) : undefined
  if (!id.success || !owned || !handlers.deleteCredential) throw authError('not_found', 'No such passkey')
  await requireRecentLogin(ctx, owner, 'passkey_delete')
  await handlers.deleteCredential(id.data, owner.sub)
  ctx.logger.security('passkey_deleted', { user: owner.sub })
  await emitHook(ctx, 'svc:passkey:deleted', { userId: owner.sub, credential: passkeyInfo(owned), event })
  return { success: true }
}
