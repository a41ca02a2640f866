import type { ResolvedPasswordOptions } from '../password-types'
import type { AuthContext } from '../../server/lib/core/context'
import { getAuthHandlers } from '../../server/lib/core/handlers'
import { createPasswordHasher, type PasswordHasher } from './hashing'
import { breachGuard } from './breach-check'
import { isPasswordEnabled, resolvePasswordOptions, validatePasswordOptions } from './password-options'
import { formatValidationErrors } from '../../server/lib/config/validate-options'
import { oncePer } from '../../shared/values'
import { backgroundWorkOutlivesRequests, workerThreadsAvailable } from '../../server/lib/config/platform'

/** Per-process state of the password provider. */
export interface PasswordRuntime {
  options: ResolvedPasswordOptions
  hasher: PasswordHasher
  /** True when a new password is found in data breaches (`breachCheck`; always false when it is off). */
  breached: (password: string) => Promise<boolean>
}

/**
 * The password provider's options and hasher, created once; the dummy hash starts at once (not on Workers,
 * where work left running when a request ends never finishes).
 */
export const usePasswordRuntime = oncePer((ctx: AuthContext): PasswordRuntime => {
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
  return { options, hasher, breached: breachGuard(options.breachCheck, message => ctx.logger.warn(message)) }
})
