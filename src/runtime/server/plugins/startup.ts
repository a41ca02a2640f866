/**
 * Creates the auth context when the server starts, so a configuration mistake (for example a
 * missing NUXT_SVC_AUTH_TOKEN_SECRET in production) is reported at once instead of on the
 * first request. Requests to the module's endpoints answer a generic 500 until it is fixed.
 */
import { defineNitroPlugin } from 'nitropack/runtime'
import { useAuthContext } from '../utils/context'

export default defineNitroPlugin((nitroApp) => {
  useAuthContext().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error)
  })
  nitroApp.hooks.hook('close', async () => {
    const ctx = await useAuthContext().catch(() => undefined)
    await ctx?.dispose()
  })
})
