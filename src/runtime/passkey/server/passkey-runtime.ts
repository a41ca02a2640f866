import type { ResolvedPasskeyOptions } from '../passkey-types'
import type { AuthContext } from '../../server/lib/core/context'
import { formatValidationErrors } from '../../server/lib/config/validate-options'
import { oncePer } from '../../shared/values'
import { isPasskeyEnabled, resolvePasskeyOptions, validatePasskeyOptions } from './passkey-options'

/** Per-process state of the passkey provider. */
export interface PasskeyRuntime {
  options: ResolvedPasskeyOptions
}

/** The passkey provider's options for an auth context, resolved and checked once. */
export const usePasskeyRuntime = oncePer((ctx: AuthContext): PasskeyRuntime => {
  const input = ctx.options.providers.passkey
  if (!isPasskeyEnabled(input)) throw new Error('[svc-auth] The passkey provider is not configured (svcAuth.providers.passkey).')
  const options = resolvePasskeyOptions(input)
  const errors = validatePasskeyOptions(options, ctx.options.publicUrl)
  if (errors.length) throw new Error(formatValidationErrors(errors))
  return { options }
})
