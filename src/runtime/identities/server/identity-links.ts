/** Links and unlinks of provider identities, each serialised by a lease: the host's handlers need no transactions. */
import type { H3Event } from 'h3'
import type { AuthClaims } from '../../types/auth'
import type { IdentityLinkedVia, LinkedIdentity } from '../identity-types'
import type { AuthContext } from '../../server/lib/core/context'
import { authError, type AuthErrorCode } from '../../server/lib/edge/errors'
import { withLease } from '../../server/lib/edge/lease'
import { securityEvent } from '../../server/lib/edge/security-event'
import { emitHook } from '../../server/lib/core/handlers'
import { IDENTITY_RECORDS, identityHandlers } from './identity-handlers'
import { countOf, otherLoginMethods } from './login-methods'

/** Who asked for a change, for its security event: the bearer's claims, or the user and session a link was started by. */
export type LinkActor = { caller: AuthClaims } | { actor: string, session?: string }

const lockKey = (ctx: AuthContext, id: string) => ctx.store.key(IDENTITY_RECORDS.identityLock, id)

/** Reports a refused link or unlink (`identity.refused`). */
function refused(ctx: AuthContext, event: H3Event, by: LinkActor, provider: string, reason: AuthErrorCode, subject?: string): Promise<void> {
  return securityEvent(ctx, event, { type: 'identity.refused', outcome: 'failure', ...by, subject, details: { provider, reason } })
}

/**
 * Links `identity` to its user, under the identity's lease (of concurrent links of one identity, the first wins):
 * `true` when it was linked now, `false` when it was linked to this user already. Refuses an identity linked to
 * another user (409 `identity_taken`) and a second identity of one provider (409 `provider_already_linked`).
 */
export async function linkIdentity(ctx: AuthContext, event: H3Event, identity: LinkedIdentity, via: IdentityLinkedVia, by: LinkActor): Promise<boolean> {
  const handlers = identityHandlers(event)
  const { provider, subject, userId } = identity
  const linked = await withLease(ctx.store, lockKey(ctx, `i\0${provider}\0${subject}`), async () => {
    const owner = await handlers.findUserByIdentity(provider, subject)
    if (owner === userId) return false
    if (owner) {
      await refused(ctx, event, by, provider, 'identity_taken', userId)
      throw authError('identity_taken')
    }
    if ((await handlers.listIdentities(userId)).some(other => other.provider === provider)) {
      await refused(ctx, event, by, provider, 'provider_already_linked', userId)
      throw authError('provider_already_linked')
    }
    await handlers.linkIdentity(identity)
    return true
  }, { onReleaseError: error => ctx.logger.warn('Releasing the lease of an identity failed', error) })
  if (!linked) return false
  await securityEvent(ctx, event, { type: 'identity.linked', ...by, subject: userId, details: { provider, via } })
  await emitHook(ctx, 'svc:identity:linked', { identity, via, event })
  return true
}

/**
 * Unlinks the caller's identity of `provider`, under the user's lease (two unlinks at once never leave the account
 * without a way in): 404 `not_found` when none is linked, 409 `last_login_method` when it is the last way to log in.
 */
export async function unlinkProvider(ctx: AuthContext, event: H3Event, caller: AuthClaims, provider: string): Promise<void> {
  const handlers = identityHandlers(event)
  const identity = await withLease(ctx.store, lockKey(ctx, `u\0${caller.sub}`), async () => {
    const identities = await handlers.listIdentities(caller.sub)
    const found = identities.find(candidate => candidate.provider === provider)
    if (!found) throw authError('not_found', 'No account of this provider is linked')
    if (identities.length - 1 + countOf(await otherLoginMethods(ctx, event, caller)) < 1) {
      await refused(ctx, event, { caller }, provider, 'last_login_method')
      throw authError('last_login_method')
    }
    await handlers.unlinkIdentity({ provider: found.provider, subject: found.subject, userId: caller.sub })
    return found
  })
  await securityEvent(ctx, event, { type: 'identity.unlinked', caller, details: { provider } })
  await emitHook(ctx, 'svc:identity:unlinked', { identity, event })
}
