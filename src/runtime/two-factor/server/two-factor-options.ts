import type { TwoFactorOptions } from '../two-factor-types'
import type { Parsed } from '../../types/options'
import type { z } from 'zod'
import { bool, duration, group, int, limit, oneOf, schemaErrors, secret, listOf, text, type Checked, type SameType } from '../../server/lib/config/schema'

export const TWO_FACTOR_ALGORITHMS = ['SHA1', 'SHA256', 'SHA512'] as const

/** True when the second factor is on. */
export function isTwoFactorEnabled(options: { twoFactor?: Pick<TwoFactorOptions, 'enabled'> }): boolean {
  return options.twoFactor?.enabled === true
}

/** The options of the second factor (`svcAuth.twoFactor`); checked only when it is on. */
export const twoFactorSchema = group({
  enabled: bool.default(false),
  secret: secret.default(''),
  previousSecrets: listOf(secret).default([]),
  issuer: text.refine(issuer => issuer.length <= 64 && !issuer.includes(':'), 'must be a name of at most 64 characters without \':\'.').default(''),
  requireForAll: bool.default(false),
  digits: int(6, 'must be 6, 7 or 8.', 8).default(6),
  period: duration(30, { min: 15, max: 120 }),
  algorithm: oneOf(TWO_FACTOR_ALGORITHMS).default('SHA1'),
  window: int(0, 'must be 0, 1 or 2 time steps.', 2).default(1),
  maxAttempts: int(1, 'must be a whole number from 1 to 100.', 100).default(5),
  pendingLoginTTL: duration(300, { min: 30, max: 3600 }),
  enrolmentTTL: duration(600, { min: 60, max: 86400 }),
  recoveryCodes: int(1, 'must be a whole number from 1 to 20.', 20).default(10),
  maxFailures: limit.default(20),
  failureWindow: duration(86400),
})

export type TwoFactorOptionsChecked = Checked<SameType<z.output<typeof twoFactorSchema>, Parsed<TwoFactorOptions>>>

/**
 * Every mistake in `svcAuth.twoFactor`, one message each (only `enabled` when it is off).
 * `tokenSecret` is `token.secret`: `twoFactor.secret` must be another key.
 */
export function validateTwoFactorOptions(options: TwoFactorOptions | undefined, tokenSecret = ''): string[] {
  if (options === undefined) return []
  if (options.enabled !== true) return schemaErrors(bool, options.enabled, 'svcAuth.twoFactor.enabled')
  return [
    ...schemaErrors(twoFactorSchema, options, 'svcAuth.twoFactor'),
    ...(options.secret && options.secret === tokenSecret ? ['svcAuth.twoFactor.secret must not be token.secret: it is a key of its own, so that rotating one never touches the other.'] : []),
  ]
}

/** Warning of a production server with the second factor on and no `twoFactor.secret` (a `token.secret` rotation would lose its data). */
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
