/** Links and unlinks of provider identities, each serialised by a lease: the host's handlers need no transactions. */
import type { H3Event } from 'h3'
import type { AuthClaims } from '../../types/auth'
import type { IdentityLinkedVia, LinkedIdentity } from '../identity-types'
import type { AuthContext } from '../../server/lib/core/context'
import { authError, message, type AuthErrorCode } from '../../server/lib/edge/errors'
import { withLease } from '../../server/lib/edge/lease'
import { securityEvent } from '../../server/lib/edge/security-event'
import { emitHook } from '../../server/lib/core/handlers'
import { IDENTITY_RECORDS, identityHandlers } from './identity-handlers'
import { countOf, otherLoginMethods } from './login-methods'

/** Who asked for a change, for its security event: the bearer's claims, or the user and session a link was started by. */
export type LinkActor = { caller: AuthClaims } | { actor: string, session?: string }

const lockKey = (ctx: AuthContext, id: string) => ctx.store.key(IDENTITY_RECORDS.identityLock, id)
/** The lease of one user's changes (links, unlinks, passkey deletions): two at once never leave two identities of one provider, or no way in. */
const userLock = (ctx: AuthContext, user: Pick<AuthClaims, 'sub'>) => lockKey(ctx, `u\0${user.sub}`)

/** Reports a refused link or unlink (`identity.refused`). */
function refused(ctx: AuthContext, event: H3Event, by: LinkActor, provider: string, reason: AuthErrorCode, subject?: string): Promise<void> {
  return securityEvent(ctx, event, { type: 'identity.refused', outcome: 'failure', ...by, subject, details: { provider, reason } })
}

/**
 * Links `identity` to its user, under the identity's lease (of concurrent links of one identity, the first wins), then
 * the user's: `true` when it was linked now, `false` when it was linked to this user already. Refuses an identity linked to
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
    // Under the user's lease too: two identities of one provider linked at once would both pass this check.
    return withLease(ctx.store, userLock(ctx, { sub: userId }), async () => {
      if ((await handlers.listIdentities(userId)).some(other => other.provider === provider)) {
        await refused(ctx, event, by, provider, 'provider_already_linked', userId)
        throw authError('provider_already_linked')
      }
      await handlers.linkIdentity(identity)
      return true
    })
  }, { onReleaseError: error => ctx.logger.warn('Releasing the lease of an identity failed', error) })
  if (!linked) return false
  await securityEvent(ctx, event, { type: 'identity.linked', ...by, subject: userId, details: { provider, via } })
  await emitHook(ctx, 'svc:identity:linked', { identity, via, event })
  return true
}

/** Refuses (409 `last_login_method`, an event) when removing one of the caller's `identities` or other ways in leaves none. */
async function keepAWayIn(ctx: AuthContext, event: H3Event, caller: AuthClaims, identities: number, removing: string): Promise<void> {
  if (identities - 1 + countOf(await otherLoginMethods(ctx, event, caller)) >= 1) return
  await refused(ctx, event, { caller }, removing, 'last_login_method')
  throw authError('last_login_method')
}

/**
 * Unlinks the caller's identity of `provider`, under the user's lease: 404 `not_found` when none is linked,
 * 409 `founding_identity` for the identity the account's subject names, 409 `last_login_method` when it is the
 * last way to log in.
 */
export async function unlinkProvider(ctx: AuthContext, event: H3Event, caller: AuthClaims, provider: string): Promise<void> {
  const handlers = identityHandlers(event)
  const identity = await withLease(ctx.store, userLock(ctx, caller), async () => {
    const identities = await handlers.listIdentities(caller.sub)
    const found = identities.find(candidate => candidate.provider === provider)
    if (!found) throw authError('not_found', message('provider_not_linked_here'))
    // The account's subject is this identity's (`<provider>:<subject>`): unlinked, its login would make that account again.
    if (`${found.provider}:${found.subject}` === caller.sub) {
      await refused(ctx, event, { caller }, provider, 'founding_identity')
      throw authError('founding_identity')
    }
    await keepAWayIn(ctx, event, caller, identities.length, provider)
    await handlers.unlinkIdentity({ provider: found.provider, subject: found.subject, userId: caller.sub })
    return found
  })
  await securityEvent(ctx, event, { type: 'identity.unlinked', caller, details: { provider } })
  await emitHook(ctx, 'svc:identity:unlinked', { identity, event })
}

/** Removes another way in (`method`: a passkey) through `remove`, under the user's lease as unlinks, unless it is the last one. */
export function removeLoginMethod(ctx: AuthContext, event: H3Event, caller: AuthClaims, method: string, remove: () => Promise<void>): Promise<void> {
  return withLease(ctx.store, userLock(ctx, caller), async () => {
    await keepAWayIn(ctx, event, caller, (await identityHandlers(event).listIdentities(caller.sub)).length, method)
    await remove()
  })
}
