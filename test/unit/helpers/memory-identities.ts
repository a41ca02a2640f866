import type { IdentityHandlers, LinkedIdentity } from '../../../src/runtime/identities/identity-types'

/**
 * The host's identity handlers over a Map, deliberately not atomic: every call yields to the event loop between
 * its read and its write, so two links of one identity interleave unless the module serialises them.
 */
export function memoryIdentities() {
  const rows = new Map<string, LinkedIdentity>()
  const key = (provider: string, subject: string) => `${provider}\0${subject}`
  const calls = { link: 0, unlink: 0 }
  const tick = () => new Promise(resolve => setTimeout(resolve, 1))
  const handlers = {
    async findUserByIdentity(provider, subject) {
      await tick()
      return rows.get(key(provider, subject))?.userId ?? null
    },
    async linkIdentity(identity) {
      await tick()
      calls.link++
      rows.set(key(identity.provider, identity.subject), { ...identity })
    },
    async unlinkIdentity({ provider, subject, userId }) {
      await tick()
      calls.unlink++
      if (rows.get(key(provider, subject))?.userId === userId) rows.delete(key(provider, subject))
    },
    async listIdentities(userId) {
      await tick()
      return [...rows.values()].filter(row => row.userId === userId).map(row => ({ ...row }))
    },
  } satisfies Required<IdentityHandlers>
  return { rows, calls, handlers }
}
