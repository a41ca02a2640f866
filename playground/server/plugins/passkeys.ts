// Passkeys of the playground, kept in memory (a real app stores them in its database: see
// docs/passkeys.md). The user's profile is remembered at registration, from the claims of the
// bearer token that registered the passkey, so a passkey login (with or without an email hint)
// finds the same user, email and role again.
import type { PasskeyCredential } from '../../../src/runtime/passkey/passkey-types'
import type { AuthClaims } from '../../../src/runtime/types/auth'

const credentials = new Map<string, PasskeyCredential>()
const profiles = new Map<string, { email?: string, name?: string, role?: unknown }>()

export default defineNitroPlugin(() => {
  defineAuthHandlers({
    passkey: {
      findCredential: id => credentials.get(id) ?? null,
      listCredentials: userId => [...credentials.values()].filter(c => c.userId === userId),
      saveCredential: (credential, { event, created }) => {
        // A login updates its passkey only while it exists (one deleted meanwhile stays deleted).
        if (!created && !credentials.has(credential.id)) return
        credentials.set(credential.id, { ...credential })
        const claims = event.context.user as AuthClaims | undefined
        if (claims?.sub === credential.userId) profiles.set(credential.userId, { email: claims.email, name: claims.name, role: claims.role })
      },
      deleteCredential: (id) => {
        credentials.delete(id)
      },
      findUserIdByEmail: email => [...profiles].find(([, profile]) => profile.email === email)?.[0] ?? null,
      findUser: id => profiles.get(id) ?? null,
    },
  })
})
