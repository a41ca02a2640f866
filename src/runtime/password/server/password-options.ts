import { defu } from 'defu'
import { z } from 'zod'
import type { PasswordProviderOptions, ResolvedPasswordOptions } from '../password-types'
import type { CustomClaims } from '../../types/auth'
import { bool, duration, got, group, int, is, relativePath, schemaErrors, type Checked, type SameType } from '../../server/lib/config/schema'
import { originOf } from '../../server/lib/edge/origin'
import { isRecord } from '../../shared/values'

/** The options of the password provider (`svcAuth.providers.password`). */
export const passwordSchema = z.object({
  magicCodeTTL: duration(600),
  magicCodeMaxAttempts: int(1, 'must be a whole number, 1 or more.').default(5),
  passwordHashRounds: int(4, 'must be a whole number from 4 to 31.', 31).default(12),
  passwordPolicy: group({
    minLength: int(1, 'must be a whole number from 1 to 72.', 72).default(8),
    requireUppercase: bool.default(true),
    requireLowercase: bool.default(true),
    requireNumber: bool.default(true),
    requireSpecial: bool.default(false),
    rejectCommon: bool.default(true),
  }),
  customClaims: is((claims): claims is CustomClaims => isRecord(claims), issue => typeof issue.input === 'function'
    ? 'cannot be a function in nuxt.config (runtime config holds JSON only): register it with defineAuthHandlers({ password: { customClaims } }).'
    : 'must be an object of claims.').optional(),
  resetPasswordPath: relativePath('/reset-password', 'must be a relative path such as \'/reset-password\''),
  hashConcurrency: int(0, 'must be a whole number from 0 (automatic) to 64.', 64).default(0),
  breachCheck: group({
    enabled: bool.default(false),
    url: z.string().refine(url => !!originOf(url), { error: got('must be an http(s) URL such as \'https://api.pwnedpasswords.com\'') }).default('https://api.pwnedpasswords.com'),
    threshold: int(0, 'must be a whole number, 0 or more.').default(0),
    timeout: duration(1500, { min: 100, max: 30_000, unit: 'ms' }),
    failClosed: bool.default(false),
  }),
  revealExistingAccounts: bool.default(true),
})

export type PasswordOptionsChecked = Checked<SameType<z.output<typeof passwordSchema>, ResolvedPasswordOptions>>

/** Defaults of the password provider. */
export const PASSWORD_DEFAULTS: ResolvedPasswordOptions = passwordSchema.parse({})

/** True when `providers.password` is set (an object, even empty). */
export function isPasswordEnabled(value: unknown): value is PasswordProviderOptions {
  return isRecord(value)
}

/** The provider options with every default applied (a fresh object), parsed (durations in seconds) when valid. */
export function resolvePasswordOptions(input: PasswordProviderOptions | undefined): ResolvedPasswordOptions {
  // customClaims is kept as given (a mistaken function must reach validation, not break cloning).
  const { customClaims, ...rest } = input ?? {}
  const resolved = defu(structuredClone(rest), structuredClone(PASSWORD_DEFAULTS)) as ResolvedPasswordOptions
  if (customClaims !== undefined) resolved.customClaims = customClaims
  return passwordSchema.safeParse(resolved).data ?? resolved
}

/** Every mistake in the resolved provider options, one message each. */
export function validatePasswordOptions(options: ResolvedPasswordOptions): string[] {
  return schemaErrors(passwordSchema, options, 'svcAuth.providers.password')
}
