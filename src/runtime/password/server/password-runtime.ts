import type { ResolvedPasswordOptions } from '../password-types'
import type { AuthContext } from '../../server/lib/core/context'
import { getAuthHandlers } from '../../server/lib/core/handlers'
import { createPasswordHasher, type PasswordHasher } from './hashing'
import { isPasswordEnabled, resolvePasswordOptions, validatePasswordOptions } from './password-options'
import { formatValidationErrors } from '../../server/lib/config/validate-options'
import { backgroundWorkOutlivesRequests, workerThreadsAvailable } from '../../server/lib/config/platform'

/** Per-process state of the password provider. */
export interface PasswordRuntime {
  options: ResolvedPasswordOptions
  hasher: PasswordHasher
}

const runtimes = new WeakMap<AuthContext, PasswordRuntime>()

/**
 * The password provider's options and hasher for an auth context, created (and checked) once.
 * Starts computing the dummy hash at once, so the first unknown-user login is not faster; not on
 * Workers, where a computation left running when its request ends never finishes (the first
 * unknown-user login computes it there, and waits for it).
 */
export function usePasswordRuntime(ctx: AuthContext): PasswordRuntime {
  let runtime = runtimes.get(ctx)
  if (runtime) return runtime
  const input = ctx.options.providers.password
  if (!isPasswordEnabled(input)) throw new Error('[svc-auth] The password provider is not configured (svcAuth.providers.password).')
  const options = resolvePasswordOptions(input)
  const errors = validatePasswordOptions(options)
  if (errors.length) throw new Error(formatValidationErrors(errors))
  const hasher = createPasswordHasher({
    rounds: options.passwordHashRounds,
    concurrency: options.hashConcurrency,
    handlers: () => getAuthHandlers().password,
    warn: message => ctx.logger.warn(message),
    // From the deploy target (the build's record): a Node deployment never computes in its event loop.
    threads: workerThreadsAvailable(ctx.deployTarget),
  })
  if (backgroundWorkOutlivesRequests()) hasher.warmUp().catch(error => ctx.logger.warn('Could not compute the dummy password hash', error))
  runtime = { options, hasher }
  runtimes.set(ctx, runtime)
  return runtime
}
