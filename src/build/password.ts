import { addImports, addServerImports, addServerPlugin } from '@nuxt/kit'
import { isPasswordEnabled, resolvePasswordOptions, validatePasswordOptions } from '../runtime/password/server/password-options'
import { formatValidationErrors } from '../runtime/server/lib/config/validate-options'
import { addRoutes, passwordRoutes } from './module-routes'
import type { SetupContext } from './setup-context'

/** Registers the password provider's routes, server utils and `usePassword()` when `providers.password` is set. */
export function setupPassword(ctx: SetupContext): void {
  const input = ctx.options.providers.password
  if (!isPasswordEnabled(input)) return
  const errors = validatePasswordOptions(resolvePasswordOptions(input))
  if (errors.length) throw new Error(formatValidationErrors(errors))

  addServerPlugin(ctx.resolver.resolve('./runtime/password/server/password-plugin'))
  addRoutes(ctx.resolver, passwordRoutes(ctx.options))
  const hashUtils = ctx.resolver.resolve('./runtime/password/server/utils/password-hash')
  addServerImports([
    { name: 'hashPassword', from: hashUtils },
    { name: 'verifyPassword', from: hashUtils },
  ])
  addImports([{ name: 'usePassword', from: ctx.resolver.resolve('./runtime/password/app/usePassword') }])
}
