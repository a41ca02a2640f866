import { addServerPlugin } from '@nuxt/kit'
import { isPasskeyEnabled, resolvePasskeyOptions, validatePasskeyOptions } from '../runtime/passkey/server/passkey-options'
import { addRoutes, passkeyRoutes } from './module-routes'
import { formatValidationErrors } from '../runtime/server/lib/config/validate-options'
import type { SetupContext } from './setup-context'

/** The browser side of passkeys (the WebAuthn ceremonies), under src/. */
export const PASSKEY_CLIENT = './runtime/passkey/app/passkey-client'

/** Registers the passkey provider's routes, start-up check and client code when `providers.passkey` is set. */
export function setupPasskey(ctx: SetupContext): void {
  const input = ctx.options.providers.passkey
  if (!isPasskeyEnabled(input)) return
  const errors = validatePasskeyOptions(resolvePasskeyOptions(input), ctx.options.publicUrl)
  if (errors.length) throw new Error(formatValidationErrors(errors))
  addServerPlugin(ctx.resolver.resolve('./runtime/passkey/server/passkey-plugin'))
  addRoutes(ctx.resolver, passkeyRoutes(ctx.options))
  ctx.clientFeatures.passkey = ctx.resolver.resolve(PASSKEY_CLIENT)
}
