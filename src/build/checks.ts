import type { ModuleOptions } from '../runtime/types/options'
import { formatValidationErrors, validateOptions } from '../runtime/server/lib/validate'

export interface CheckContext {
  dev: boolean
  /** Environment of the build (a runtime secret may come from NUXT_SVC_AUTH_TOKEN_SECRET). */
  env: Record<string, string | undefined>
  /**
   * The app's base URL (`app.baseURL`): the module's endpoints and the pages are served under it.
   * @default '/'
   */
  baseURL?: string
}

/**
 * Checks the options when Nuxt starts. Throws one error listing every mistake. During a
 * production build a missing secret is only a warning (it may be given at runtime through
 * NUXT_SVC_AUTH_TOKEN_SECRET; the server checks again when it starts).
 */
export function checkOptions(options: ModuleOptions, { dev, env, baseURL = '/' }: CheckContext): string[] {
  const secretFromEnv = !!env.NUXT_SVC_AUTH_TOKEN_SECRET
  const { errors, warnings } = validateOptions(options, { secretRequired: dev && !secretFromEnv, baseURL })
  if (errors.length) throw new Error(formatValidationErrors(errors))
  if (!options.token.secret && !secretFromEnv) {
    warnings.push('svcAuth.token.secret is not set: provide NUXT_SVC_AUTH_TOKEN_SECRET when the server starts.')
  }
  return warnings
}
