/** Creates the auth context at start-up (Workers: first request), so a configuration mistake is reported at once. */
import { defineNitroPlugin } from 'nitropack/runtime'
import { reportStartupError, runAtStartup } from '../lib/config/startup'
import { useAuthContext } from '../utils/auth-context'

export default defineNitroPlugin((nitroApp) => {
  runAtStartup(nitroApp.hooks, () => useAuthContext(), reportStartupError)
  nitroApp.hooks.hook('close', async () => {
    const ctx = await useAuthContext().catch(() => undefined)
    await ctx?.dispose()
  })
})
