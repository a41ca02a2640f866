import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { createEvent } from 'h3'
import type { LinkedIdentity } from '../runtime/identities/identity-types'
import { RULES, type IdentityAdapter, type IdentityRun } from './identities-rules'

export type { IdentityAdapter } from './identities-rules'

/** `length` random lowercase letters and digits. */
function randomText(length: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789'
  let out = ''
  for (const byte of globalThis.crypto.getRandomValues(new Uint8Array(length))) out += alphabet[byte % alphabet.length]
  return out
}

/** Now, to the second (a database that keeps seconds reads it back as written). */
const now = () => new Date(Math.floor(Date.now() / 1000) * 1000).toISOString()

/** A failed rule (its message names the rule). */
class BrokenRule extends Error {}

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
  const provider = `contract-${randomText(8)}`
  const run: IdentityRun = {
    find: (p, subject) => Promise.resolve(adapter.findUserByIdentity(p, subject, context)),
    async link(identity) {
      linked.push(identity)
      await adapter.linkIdentity(identity, context)
    },
    unlink: async identity => adapter.unlinkIdentity(identity, context),
    list: async userId => adapter.listIdentities(userId, context),
    identity: (userId, p = run.fresh('provider')) => ({ provider: p, subject: `Contract-${randomText(16)}`, userId, linkedAt: now() }),
    fresh: kind => (kind === 'user' ? `contract-user-${randomText(16)}` : `${provider}-${randomText(6)}`),
    expect(condition, detail) {
      if (!condition) throw new BrokenRule(detail)
    },
  }
  try {
    for (const rule of RULES) {
      try {
        await rule.check(run)
      }
      catch (error) {
        const detail = error instanceof BrokenRule ? error.message : `the adapter threw: ${error instanceof Error ? error.message : String(error)}`
        throw new Error(`Identity adapter breaks the rule "${rule.name}": ${detail}`, { cause: error })
      }
    }
  }
  finally {
    // Best effort: a broken adapter may fail here too; the first error is what the caller sees.
    await Promise.allSettled(linked.map(identity => adapter.unlinkIdentity(identity, context)))
  }
}
