/** Checks the passkey options when the server starts and, outside development, logs loudly without a relying party. */
import { defineNitroPlugin } from 'nitropack/runtime'
import { configuredRelyingParty } from './passkey-options'
import { usePasskeyRuntime } from './passkey-runtime'
import { reportStartupError, runAtStartup } from '../../server/lib/config/startup'
import { useAuthContext } from '../../server/utils/auth-context'

export default defineNitroPlugin((nitroApp) => {
  runAtStartup(nitroApp.hooks, async () => {
    const ctx = await useAuthContext()
    const runtime = usePasskeyRuntime(ctx)
    if (!ctx.dev && !configuredRelyingParty(runtime.options, ctx.options.publicUrl)) {
      ctx.logger.error('Passkeys are on but no relying party is configured: set NUXT_SVC_AUTH_PUBLIC_URL (or svcAuth.providers.passkey.origins and rpID). Every passkey request answers 500 passkey_not_configured until then.')
    }
  }, reportStartupError)
})
