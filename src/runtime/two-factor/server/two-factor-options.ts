import type { TwoFactorOptions } from '../two-factor-types'
import { stringList } from '../../server/lib/config/string-list'

export const TWO_FACTOR_ALGORITHMS = ['SHA1', 'SHA256', 'SHA512'] as const

const isInteger = (value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): boolean =>
  typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max

/** True when the second factor is on. */
export function isTwoFactorEnabled(options: { twoFactor?: Pick<TwoFactorOptions, 'enabled'> }): boolean {
  return options.twoFactor?.enabled === true
}

/**
 * Every mistake in `svcAuth.twoFactor`, one message each (none when it is off). `tokenSecret` is
 * `token.secret`: `twoFactor.secret` must be another key.
 */
export function validateTwoFactorOptions(options: TwoFactorOptions | undefined, tokenSecret = ''): string[] {
  if (options === undefined) return []
  const errors: string[] = []
  const at = (key: string) => `svcAuth.twoFactor.${key}`
  if (typeof options.enabled !== 'boolean') errors.push(`${at('enabled')} must be true or false.`)
  if (options.enabled !== true) return errors
  errors.push(...twoFactorKeyErrors(options, tokenSecret))
  if (typeof options.issuer !== 'string' || options.issuer.length > 64 || options.issuer.includes(':')) errors.push(`${at('issuer')} must be a name of at most 64 characters without ':'.`)
  if (typeof options.requireForAll !== 'boolean') errors.push(`${at('requireForAll')} must be true or false.`)
  if (!isInteger(options.digits, 6, 8)) errors.push(`${at('digits')} must be 6, 7 or 8.`)
  if (!isInteger(options.period, 15, 120)) errors.push(`${at('period')} must be a whole number of seconds from 15 to 120.`)
  if (!(TWO_FACTOR_ALGORITHMS as readonly string[]).includes(options.algorithm)) errors.push(`${at('algorithm')} must be one of ${TWO_FACTOR_ALGORITHMS.join(', ')}.`)
  if (!isInteger(options.window, 0, 2)) errors.push(`${at('window')} must be 0, 1 or 2 time steps.`)
  if (!isInteger(options.maxAttempts, 1, 100)) errors.push(`${at('maxAttempts')} must be a whole number from 1 to 100.`)
  if (!isInteger(options.pendingLoginTTL, 30, 3600)) errors.push(`${at('pendingLoginTTL')} must be a whole number of seconds from 30 to 3600.`)
  if (!isInteger(options.enrolmentTTL, 60, 86400)) errors.push(`${at('enrolmentTTL')} must be a whole number of seconds from 60 to 86400.`)
  if (!isInteger(options.recoveryCodes, 1, 20)) errors.push(`${at('recoveryCodes')} must be a whole number from 1 to 20.`)
  if (!isInteger(options.maxFailures, 0)) errors.push(`${at('maxFailures')} must be a whole number, 0 (no limit) or more.`)
  if (!isInteger(options.failureWindow, 1)) errors.push(`${at('failureWindow')} must be a whole number of seconds, 1 or more.`)
  return errors
}

const byteLength = (value: string) => Buffer.byteLength(value, 'utf8')

/** Mistakes in `twoFactor.secret` and `twoFactor.previousSecrets`. */
function twoFactorKeyErrors(options: Pick<TwoFactorOptions, 'secret' | 'previousSecrets'>, tokenSecret: string): string[] {
  const errors: string[] = []
  const { secret, previousSecrets } = options
  if (secret !== undefined && secret !== '') {
    if (typeof secret !== 'string' || byteLength(secret) < 32) errors.push('svcAuth.twoFactor.secret must be at least 32 bytes long (or empty: token.secret keys the two-factor data).')
    else if (secret === tokenSecret) errors.push('svcAuth.twoFactor.secret must not be token.secret: it is a key of its own, so that rotating one never touches the other.')
  }
  const isList = previousSecrets === undefined || typeof previousSecrets === 'string' || (Array.isArray(previousSecrets) && previousSecrets.every(item => typeof item === 'string'))
  if (!isList) errors.push('svcAuth.twoFactor.previousSecrets must be an array of secrets.')
  else if (stringList(previousSecrets).some(p => byteLength(p) < 32)) errors.push('svcAuth.twoFactor.previousSecrets: every secret must be at least 32 bytes long.')
  return errors
}

/**
 * The one-line warning of a production server with the second factor on and no
 * `twoFactor.secret`: its data is keyed by `token.secret`, which a rotation may remove. Undefined
 * when there is nothing to say.
 */
export function twoFactorKeyWarning(options: { twoFactor?: Pick<TwoFactorOptions, 'enabled' | 'secret'> }, dev: boolean): string | undefined {
  if (dev || !isTwoFactorEnabled(options) || options.twoFactor?.secret) return undefined
  return 'svcAuth.twoFactor.secret is not set: rotating token.secret would make the second factors unreadable: set twoFactor.secret (NUXT_SVC_AUTH_TWO_FACTOR_SECRET).'
}

/** The issuer shown in authenticator apps: the option, else the host of `publicUrl`, else 'Nuxt'. */
export function issuerOf(options: { twoFactor: Pick<TwoFactorOptions, 'issuer'>, publicUrl: string }): string {
  if (options.twoFactor.issuer) return options.twoFactor.issuer
  try {
    if (options.publicUrl) return new URL(options.publicUrl).hostname
  }
  catch {
    // An invalid publicUrl is reported by the option checks.
  }
  return 'Nuxt'
}
