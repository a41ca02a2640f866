import type { PasswordPolicyOptions } from '../../../types/password'
import { COMMON_PASSWORDS } from './common-passwords'

/** bcrypt uses the first 72 bytes of a password; longer ones would be silently cut. */
export const MAX_PASSWORD_BYTES = 72

let common: ReadonlySet<string> | undefined

/** The shipped list of common passwords (lowercase), parsed on first use. */
export function commonPasswords(): ReadonlySet<string> {
  common ??= new Set(COMMON_PASSWORDS.split(/\s+/).filter(Boolean))
  return common
}

/**
 * True for a password of the common list, compared case-insensitively, also with trailing
 * symbols removed (`Password1!` matches `password1`).
 */
export function isCommonPassword(password: string): boolean {
  const lower = password.toLowerCase()
  const list = commonPasswords()
  return list.has(lower) || list.has(lower.replace(/[^\p{L}\p{N}]+$/u, ''))
}

/**
 * Every rule of the policy that `password` breaks, as readable phrases (empty when it passes).
 * Letters and digits are Unicode-aware; "special" is anything that is neither.
 */
export function checkPasswordPolicy(password: string, policy: Required<PasswordPolicyOptions>): string[] {
  const violations: string[] = []
  const length = [...password].length
  if (length < policy.minLength) violations.push(`at least ${policy.minLength} characters`)
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) violations.push(`at most ${MAX_PASSWORD_BYTES} bytes`)
  if (policy.requireUppercase && !/\p{Lu}/u.test(password)) violations.push('an uppercase letter')
  if (policy.requireLowercase && !/\p{Ll}/u.test(password)) violations.push('a lowercase letter')
  if (policy.requireNumber && !/\p{N}/u.test(password)) violations.push('a number')
  if (policy.requireSpecial && !/[^\p{L}\p{N}]/u.test(password)) violations.push('a special character')
  if (policy.rejectCommon && isCommonPassword(password)) violations.push('not one of the most common passwords')
  return violations
}

/** The 400 message of a policy failure, naming every violation. */
export function policyMessage(violations: string[]): string {
  return `Password does not meet the policy: needs ${violations.join(', ')}`
}
