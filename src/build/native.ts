import { isNativeEnabled, validateNativeOptions } from '../runtime/native/server/native-options'
import { formatValidationErrors } from '../runtime/server/lib/config/validate-options'
import { addRoutes, nativeRoutes } from './module-routes'
import type { SetupContext } from './setup-context'

/**
 * The endpoints of native and other non-browser clients when `native` is set (token, refresh and logout with
 * the refresh token in the body; the RFC 8252 login with an OAuth provider); off, none of them.
 */
export function setupNative(ctx: SetupContext): void {
  if (!isNativeEnabled(ctx.options)) return
  const errors = validateNativeOptions(ctx.options)
  if (errors.length) throw new Error(formatValidationErrors(errors))
  addRoutes(ctx.resolver, nativeRoutes(ctx.options))
}
