import { addImports, addServerImports, addServerPlugin } from '@nuxt/kit'
import { isPasswordEnabled, resolvePasswordOptions, validatePasswordOptions, validateRateLimitOptions } from '../runtime/password/server/password-options'
import { addRoutes, passwordRoutes } from './module-routes'
import type { SetupContext } from './setup-context'

/**
 * Registers the password provider when `providers.password` is set, after checking its options
 * (the runtime config, written by `buildRuntimeConfig`, holds them with their defaults, so each
 * can be overridden with `NUXT_SVC_AUTH_PROVIDERS_PASSWORD_*` variables): its routes, the
 * auto-imported server utils `hashPassword` and `verifyPassword`, and the auto-imported
 * `usePassword()` of the browser. Off, nothing of it is added: no route, no util, no client code.
 */
export function setupPassword(ctx: SetupContext): void {
  const input = ctx.options.providers.password
  if (!isPasswordEnabled(input)) return
  const options = resolvePasswordOptions(input)
  const errors = [...validatePasswordOptions(options), ...validateRateLimitOptions(ctx.options.rateLimit)]
  if (errors.length) throw new Error(`[svc-auth] Invalid configuration:\n${errors.map(e => `  - ${e}`).join('\n')}`)

  addServerPlugin(ctx.resolver.resolve('./runtime/password/server/password-plugin'))
  addRoutes(ctx.resolver, passwordRoutes(ctx.options))
  const hashUtils = ctx.resolver.resolve('./runtime/password/server/utils/password-hash')
  addServerImports([
    { name: 'hashPassword', from: hashUtils },
    { name: 'verifyPassword', from: hashUtils },
  ])
  addImports([{ name: 'usePassword', from: ctx.resolver.resolve('./runtime/password/app/usePassword') }])
}
