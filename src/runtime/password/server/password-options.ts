import { defu } from 'defu'
import type { PasswordProviderOptions, ResolvedPasswordOptions } from '../password-types'
import type { RateLimitOptions, RateLimitRuleName } from '../../types/rate-limit-options'
import { isTrustedProxyEntry } from '../../server/lib/edge/rate-limit'
import { isRelativePath } from '../../shared/paths'

/** Defaults of the password provider, as in the provider table of the documentation. */
export const PASSWORD_DEFAULTS: ResolvedPasswordOptions = {
  magicCodeTTL: 600,
  magicCodeMaxAttempts: 5,
  passwordHashRounds: 12,
  passwordPolicy: {
    minLength: 8,
    requireUppercase: true,
    requireLowercase: true,
    requireNumber: true,
    requireSpecial: false,
    rejectCommon: true,
  },
  resetPasswordPath: '/reset-password',
  hashConcurrency: 0,
}

/** True when `providers.password` is set (an object, even empty). */
export function isPasswordEnabled(value: unknown): value is PasswordProviderOptions {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The provider options with every default applied (a fresh object). */
export function resolvePasswordOptions(input: PasswordProviderOptions | undefined): ResolvedPasswordOptions {
  // customClaims is kept as given (a mistaken function must reach validation, not break cloning).
  const { customClaims, ...rest } = input ?? {}
  const resolved = defu(structuredClone(rest), structuredClone(PASSWORD_DEFAULTS)) as ResolvedPasswordOptions
  if (customClaims !== undefined) resolved.customClaims = customClaims
  return resolved
}

const isInteger = (value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): boolean =>
  typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max

/** Every mistake in the resolved provider options, one message each. */
export function validatePasswordOptions(options: ResolvedPasswordOptions): string[] {
  const errors: string[] = []
  const at = (key: string) => `svcAuth.providers.password.${key}`
  if (!isInteger(options.magicCodeTTL, 1)) errors.push(`${at('magicCodeTTL')} must be a whole number of seconds, 1 or more.`)
  if (!isInteger(options.magicCodeMaxAttempts, 1)) errors.push(`${at('magicCodeMaxAttempts')} must be a whole number, 1 or more.`)
  if (!isInteger(options.passwordHashRounds, 4, 31)) errors.push(`${at('passwordHashRounds')} must be a whole number from 4 to 31.`)
  if (!isInteger(options.hashConcurrency, 0, 64)) errors.push(`${at('hashConcurrency')} must be a whole number from 0 (automatic) to 64.`)
  if (!isInteger(options.passwordPolicy.minLength, 1, 72)) errors.push(`${at('passwordPolicy.minLength')} must be a whole number from 1 to 72.`)
  for (const key of ['requireUppercase', 'requireLowercase', 'requireNumber', 'requireSpecial', 'rejectCommon'] as const) {
    if (typeof options.passwordPolicy[key] !== 'boolean') errors.push(`${at(`passwordPolicy.${key}`)} must be true or false.`)
  }
  if (!isRelativePath(options.resetPasswordPath)) errors.push(`${at('resetPasswordPath')} must be a relative path such as '/reset-password'.`)
  if (typeof options.customClaims === 'function') {
    errors.push(`${at('customClaims')} cannot be a function in nuxt.config (runtime config holds JSON only): register it with defineAuthHandlers({ password: { customClaims } }).`)
  }
  else if (options.customClaims !== undefined && (typeof options.customClaims !== 'object' || options.customClaims === null || Array.isArray(options.customClaims))) {
    errors.push(`${at('customClaims')} must be an object of claims.`)
  }
  return errors
}

/** The longest cookie lifetime browsers keep (400 days, RFC 6265bis). */
const MAX_COOKIE_AGE = 400 * 86400

export const RATE_LIMIT_RULES: readonly RateLimitRuleName[] = ['register', 'login', 'resetRequest', 'verify', 'resetComplete', 'change', 'passkey']

/** Every mistake in `svcAuth.rateLimit`, one message each. */
export function validateRateLimitOptions(options: RateLimitOptions): string[] {
  const errors: string[] = []
  if (typeof options.enabled !== 'boolean') errors.push('svcAuth.rateLimit.enabled must be true or false.')
  if (!Array.isArray(options.trustedProxies)) errors.push('svcAuth.rateLimit.trustedProxies must be an array of addresses or CIDR ranges.')
  else {
    for (const entry of options.trustedProxies) {
      if (!isTrustedProxyEntry(entry)) errors.push(`svcAuth.rateLimit.trustedProxies: ${JSON.stringify(entry)} is not an IP address or CIDR range.`)
    }
  }
  // clientAddressHeader serves every client address (sessions, security logs): validateOptions checks it.
  for (const name of RATE_LIMIT_RULES) {
    const rule = options[name]
    if (!rule || typeof rule !== 'object') {
      errors.push(`svcAuth.rateLimit.${name} must be an object { perIp, perEmail, window }.`)
      continue
    }
    if (!isInteger(rule.perIp, 0)) errors.push(`svcAuth.rateLimit.${name}.perIp must be a whole number, 0 (no limit) or more.`)
    if (!isInteger(rule.perEmail, 0)) errors.push(`svcAuth.rateLimit.${name}.perEmail must be a whole number, 0 (no limit) or more.`)
    if (!isInteger(rule.window, 1)) errors.push(`svcAuth.rateLimit.${name}.window must be a whole number of seconds, 1 or more.`)
  }
  if (options.login && typeof options.login === 'object') {
    if (!isInteger(options.login.perEmailAndIp, 0)) errors.push('svcAuth.rateLimit.login.perEmailAndIp must be a whole number, 0 (no limit) or more.')
    // Browsers keep a cookie 400 days at most.
    if (!isInteger(options.login.deviceCookieMaxAge, 0, MAX_COOKIE_AGE)) errors.push(`svcAuth.rateLimit.login.deviceCookieMaxAge must be a whole number of seconds from 0 (no device cookies) to ${MAX_COOKIE_AGE} (400 days).`)
  }
  const budget = options.codeOnlyVerify
  if (!budget || typeof budget !== 'object') errors.push('svcAuth.rateLimit.codeOnlyVerify must be an object { misses, window }.')
  else {
    if (!isInteger(budget.misses, 0)) errors.push('svcAuth.rateLimit.codeOnlyVerify.misses must be a whole number, 0 (code-only verification off) or more.')
    if (!isInteger(budget.window, 1)) errors.push('svcAuth.rateLimit.codeOnlyVerify.window must be a whole number of seconds, 1 or more.')
  }
  const failures = options.verifyFailures
  if (!failures || typeof failures !== 'object') errors.push('svcAuth.rateLimit.verifyFailures must be an object { perEmail, window }.')
  else {
    if (!isInteger(failures.perEmail, 0)) errors.push('svcAuth.rateLimit.verifyFailures.perEmail must be a whole number, 0 (no limit) or more.')
    if (!isInteger(failures.window, 1)) errors.push('svcAuth.rateLimit.verifyFailures.window must be a whole number of seconds, 1 or more.')
  }
  return errors
}
