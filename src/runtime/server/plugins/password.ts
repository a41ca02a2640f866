/**
 * Prepares the password provider when the server starts: its options are checked (a mistake is
 * logged at once) and the dummy hash for unknown-user logins is computed ahead of the first one.
 */
import { defineNitroPlugin } from 'nitropack/runtime'
import { usePasswordRuntime } from '../lib/password/runtime'
import { useAuthContext } from '../utils/context'

export default defineNitroPlugin(() => {
  useAuthContext()
    .then(ctx => usePasswordRuntime(ctx))
    .catch((error: unknown) => {
      console.error(error instanceof Error ? error.message : error)
    })
})
