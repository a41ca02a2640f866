/** The user's own passkeys: listing and deleting them (bearer-authenticated). */
import { getRouterParam } from 'h3'
import type { PasskeyInfo } from '../passkey-types'
import type { AuthContext } from '../../server/lib/core/context'
import { authError, message } from '../../server/lib/edge/errors'
import { requireRecentLogin } from '../../server/lib/core/recent-login'
import { passkeyIdSchema } from '../../server/lib/edge/request-schemas'
import { passkeyInfo, requirePasskeyOwner } from './passkey-credentials'
import { passkeyHandlers } from './passkey-handlers'
import { usePasskeyRuntime } from './passkey-runtime'
import { guarded } from '../../server/lib/edge/route-contract'
import { securityEvent } from '../../server/lib/edge/security-event'
import { PASSKEY_ROUTES } from './passkey-routes'
import { emitHook } from '../../server/lib/core/handlers'

const newestFirst = (a: PasskeyInfo, b: PasskeyInfo) => b.createdAt.localeCompare(a.createdAt)

/** GET credentials: the caller's passkeys, newest first. */
export const listPasskeys = guarded(PASSKEY_ROUTES.list, async (ctx: AuthContext, event): Promise<{ credentials: PasskeyInfo[] }> => {
  const owner = await requirePasskeyOwner(event, ctx)
  usePasskeyRuntime(ctx)
  const credentials = await passkeyHandlers(event).listCredentials(owner.sub)
  return { credentials: credentials.map(passkeyInfo).sort(newestFirst) }
})

/** DELETE credentials/:id: through the host's `deleteCredential`; another user's id, an unknown one and no handler answer 404 alike. */
export const deletePasskey = guarded(PASSKEY_ROUTES.delete, async (ctx: AuthContext, event): Promise<{ success: true }> => {
  const owner = await requirePasskeyOwner(event, ctx)
  usePasskeyRuntime(ctx)
  const handlers = passkeyHandlers(event)
  const id = passkeyIdSchema.safeParse(getRouterParam(event, 'id', { decode: true }))
  const owned = id.success && handlers.deleteCredential ? (await handlers.listCredentials(owner.sub)).find(c => c.id === id.data) : undefined
  if (!id.success || !owned || !handlers.deleteCredential) throw authError('not_found', message('no_such_passkey'))
  await requireRecentLogin(ctx, event, owner, 'passkey_delete')
  const { deleteCredential } = handlers
  const remove = () => deleteCredential(id.data, owner.sub)
  // Linked identities on: not the account's last way in, and one at a time with unlinks.
  const guard = ctx.features.find(feature => feature.removeLoginMethod)?.removeLoginMethod
  await (guard ? guard(ctx, event, owner, 'passkey', remove) : remove())
  await securityEvent(ctx, event, { type: 'passkey.deleted', caller: owner })
  await emitHook(ctx, 'svc:passkey:deleted', { userId: owner.sub, credential: passkeyInfo(owned), event })
  return { success: true }
})
