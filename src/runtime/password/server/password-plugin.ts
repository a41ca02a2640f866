/** Checks the password provider's options when the server starts (Workers: first request). */
import { defineNitroPlugin } from 'nitropack/runtime'
import { usePasswordRuntime } from './password-runtime'
import { reportStartupError, runAtStartup } from '../../server/lib/config/startup'
import { useAuthContext } from '../../server/utils/auth-context'

export default defineNitroPlugin((nitroApp) => {
  runAtStartup(nitroApp.hooks, async () => usePasswordRuntime(await useAuthContext()), reportStartupError)
})
