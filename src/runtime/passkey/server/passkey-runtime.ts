import type { ResolvedPasskeyOptions } from '../passkey-types'
import type { AuthContext } from '../../server/lib/core/context'
import { formatValidationErrors } from '../../server/lib/config/validate-options'
import { isPasskeyEnabled, resolvePasskeyOptions, validatePasskeyOptions } from './passkey-options'

/** Per-process state of the passkey provider. */
export interface PasskeyRuntime {
  options: ResolvedPasskeyOptions
}

const runtimes = new WeakMap<AuthContext, PasskeyRuntime>()

/** The passkey provider's options for an auth context, resolved and checked once. */
export function usePasskeyRuntime(ctx: AuthContext): PasskeyRuntime {
  let runtime = runtimes.get(ctx)
  if (runtime) return runtime
  const input = ctx.options.providers.passkey
  if (!isPasskeyEnabled(input)) throw new Error('[svc-auth] The passkey provider is not configured (svcAuth.providers.passkey).')
  const options = resolvePasskeyOptions(input)
  const errors = validatePasskeyOptions(options, ctx.options.publicUrl)
  if (errors.length) throw new Error(formatValidationErrors(errors))
  runtime = { options }
  runtimes.set(ctx, runtime)
  return runtime
}
