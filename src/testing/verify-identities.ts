import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { createEvent } from 'h3'
import type { LinkedIdentity } from '../runtime/identities/identity-types'
import { RULES, type IdentityAdapter, type IdentityRun } from './identities-rules'
import { checkRules, expectRule, now, randomText } from './contract-rules'

export type { IdentityAdapter } from './identities-rules'

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'

/**
 * Proves the identity handlers of a host (`defineAuthHandlers({ identities })`) against the module's contract:
 * links stored and found by provider and subject together (exactly, case included), a user's identities listed
 * together and never another's, unlinks removing that link only (and only for its user), an identity unlinked
 * linkable again. Atomicity is not asked: the module serialises the changes of one identity itself.
 *
 * Works with any test runner (it imports none): it resolves when every rule holds and throws an Error naming the
 * first broken rule. Every run uses fresh random providers, subjects and user ids (`contract-…`) and unlinks what
 * it linked, so it can run against a shared database.
 * @param create Makes the handlers to check (called once).
 * @example
 * ```ts
 * import { it } from 'vitest'
 * import { verifyIdentityAdapter } from 'nuxt-svc-auth/testing'
 * import { identityHandlers } from '../server/identities'
 *
 * it('our identity handlers keep the contract', async () => {
 *   await verifyIdentityAdapter(() => identityHandlers(testDatabase))
 * })
 * ```
 */
export async function verifyIdentityAdapter(create: () => IdentityAdapter | Promise<IdentityAdapter>): Promise<void> {
  const adapter = await create()
  const req = new IncomingMessage(new Socket())
  const context = { event: createEvent(req, new ServerResponse(req)) }
  const linked: LinkedIdentity[] = []
  const provider = `contract-${randomText(8, ALPHABET)}`
  const run: IdentityRun = {
    find: (p, subject) => Promise.resolve(adapter.findUserByIdentity(p, subject, context)),
    async link(identity) {
      linked.push(identity)
      await adapter.linkIdentity(identity, context)
    },
    unlink: async identity => adapter.unlinkIdentity(identity, context),
    list: async userId => adapter.listIdentities(userId, context),
    identity: (userId, p = run.fresh('provider')) => ({ provider: p, subject: `Contract-${randomText(16, ALPHABET)}`, userId, linkedAt: now() }),
    fresh: kind => (kind === 'user' ? `contract-user-${randomText(16, ALPHABET)}` : `${provider}-${randomText(6, ALPHABET)}`),
    expect: expectRule,
  }
  await checkRules('Identity adapter', RULES, run, () => Promise.allSettled(linked.map(identity => adapter.unlinkIdentity(identity, context))))
}
