// Linked provider identities of the playground, kept in memory (a real app keeps them in a table of its
// database, keyed by provider and subject: see docs/oauth.md#linking-accounts).
import type { LinkedIdentity } from '../../../src/runtime/identities/identity-types'

const identities = new Map<string, LinkedIdentity>()
const key = (provider: string, subject: string) => `${provider}\0${subject}`

export default defineNitroPlugin(() => {
  defineAuthHandlers({
    identities: {
      findUserByIdentity: (provider, subject) => identities.get(key(provider, subject))?.userId ?? null,
      linkIdentity: (identity) => {
        identities.set(key(identity.provider, identity.subject), { ...identity })
      },
      unlinkIdentity: ({ provider, subject, userId }) => {
        if (identities.get(key(provider, subject))?.userId === userId) identities.delete(key(provider, subject))
      },
      listIdentities: userId => [...identities.values()].filter(identity => identity.userId === userId),
    },
  })
})
