/**
 * Prepares the password provider when the server starts (on Workers: at the start of the first
 * request): its options are checked (a mistake is logged at once) and, where work may outlive a
 * request, the dummy hash for unknown-user logins is computed ahead of the first one.
 */
import { defineNitroPlugin } from 'nitropack/runtime'
import { usePasswordRuntime } from './password-runtime'
import { reportStartupError, runAtStartup } from '../../server/lib/config/startup'
import { useAuthContext } from '../../server/utils/auth-context'

export default defineNitroPlugin((nitroApp) => {
  runAtStartup(nitroApp.hooks, async () => usePasswordRuntime(await useAuthContext()), reportStartupError)
})
