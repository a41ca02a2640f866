/**
 * Creates the auth context when the server starts, so a configuration mistake (for example a
 * missing NUXT_SVC_AUTH_TOKEN_SECRET in production) is reported at once instead of on the
 * first request. Requests to the module's endpoints answer a generic 500 until it is fixed.
 * On Workers, which forbid I/O outside a request, this happens at the start of the first request
 * (the context is made on first use anyway).
 */
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
