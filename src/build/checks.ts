import type { ModuleOptions } from '../runtime/types/options'
import { formatValidationErrors, validateOptions } from '../runtime/server/lib/config/validate-options'
import { configuredRelyingParty, isPasskeyEnabled, resolvePasskeyOptions } from '../runtime/passkey/server/passkey-options'
import { twoFactorKeyWarning, validateTwoFactorOptions } from '../runtime/two-factor/server/two-factor-options'
import { UPSTASH_ENV } from '../runtime/server/lib/store/upstash-connection'

export interface CheckContext {
  dev: boolean
  /** Environment of the build (a runtime secret may come from NUXT_SVC_AUTH_TOKEN_SECRET). */
  env: Record<string, string | undefined>
  /** The app's base URL (`app.baseURL`). @default '/' */
  baseURL?: string
}

/** Checks the options when Nuxt starts, throwing one error listing every mistake (a build only warns of a missing secret). */
export function checkOptions(options: ModuleOptions, { dev, env, baseURL = '/' }: CheckContext): string[] {
  const secretFromEnv = !!env.NUXT_SVC_AUTH_TOKEN_SECRET
  const core = validateOptions(options, { secretRequired: dev && !secretFromEnv, baseURL })
  const errors = [...core.errors, ...validateTwoFactorOptions(options.twoFactor, options.token.secret)]
  const warnings = core.warnings
  if (errors.length) throw new Error(formatValidationErrors(errors))
  if (!options.token.secret && !secretFromEnv) {
    warnings.push('svcAuth.token.secret is not set: provide NUXT_SVC_AUTH_TOKEN_SECRET when the server starts.')
  }
  warnings.push(...passkeyWarnings(options, { dev, env }))
  warnings.push(...upstashWarnings(options, env))
  const twoFactorKey = env.NUXT_SVC_AUTH_TWO_FACTOR_SECRET ? undefined : twoFactorKeyWarning(options, dev)
  if (twoFactorKey) warnings.push(twoFactorKey)
  return warnings
}

/** The upstash driver without its REST URL or token at build time (the server refuses to start without them). */
export function upstashWarnings(options: ModuleOptions, env: CheckContext['env']): string[] {
  const storage = options.tokenRefresh.storage
  if (storage.driver !== 'upstash') return []
  const missing: string[] = []
  if (!storage.url && !env.NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL && !env[UPSTASH_ENV.url]) missing.push(`NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL (or ${UPSTASH_ENV.url})`)
  if (!storage.token && !env.NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_TOKEN && !env[UPSTASH_ENV.token]) missing.push(`NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_TOKEN (or ${UPSTASH_ENV.token})`)
  return missing.length ? [`The upstash storage driver needs its REST URL and token: provide ${missing.join(' and ')} when the server starts.`] : []
}

/** Passkeys of a production build without a relying party: every ceremony is refused until `publicUrl` is set. */
export function passkeyWarnings(options: ModuleOptions, { dev, env }: Pick<CheckContext, 'dev' | 'env'>): string[] {
  const input = options.providers.passkey
  if (dev || !isPasskeyEnabled(input)) return []
  if (configuredRelyingParty(resolvePasskeyOptions(input), options.publicUrl)) return []
  if (env.NUXT_SVC_AUTH_PUBLIC_URL || env.NUXT_SVC_AUTH_PROVIDERS_PASSKEY_ORIGINS) return []
  return ['Passkeys need the site\'s origin: set svcAuth.publicUrl (or providers.passkey.origins and rpID), or NUXT_SVC_AUTH_PUBLIC_URL when the server starts; without it every passkey request answers 500 passkey_not_configured.']
}
