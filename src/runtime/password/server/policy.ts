import type { PasswordPolicyOptions } from '../password-types'
import { message, type Message, type Text } from '../../server/lib/edge/errors'
import { COMMON_PASSWORDS } from './common-passwords'

/** bcrypt uses the first 72 bytes of a password; longer ones would be silently cut. */
export const MAX_PASSWORD_BYTES = 72

/**
 * Passwords are compared in NFC (RFC 8265): `é` as one code point or `e` + accent is one password;
 * unlike NFKC, no character the user chose is folded into another.
 */
export function normalizePassword(password: string): string {
  return password.normalize('NFC')
}

/**
 * The forms a typed password is checked in (normalised, then as typed: hashes stored before normalisation),
 * none when it is longer than `limit` bytes; `work` is the hashes every refusal costs, so all look alike.
 */
export function passwordForms(typed: string, limit: number): { candidates: string[], work: number } {
  const normal = normalizePassword(typed)
  const forms = normal === typed ? [normal] : [normal, typed]
  const candidates = passwordBytes(normal) > limit ? [] : forms.filter(form => passwordBytes(form) <= limit)
  return { candidates, work: forms.length }
}

export function passwordBytes(password: string): number {
  return Buffer.byteLength(password, 'utf8')
}

let common: ReadonlySet<string> | undefined

/** Parsed on first use. */
export function commonPasswords(): ReadonlySet<string> {
  common ??= new Set(COMMON_PASSWORDS.split(/\s+/).filter(Boolean))
  return common
}

/** True for a common password, case-insensitively, also without trailing symbols (`Password1!`). */
export function isCommonPassword(password: string): boolean {
  const lower = password.toLowerCase()
  const list = commonPasswords()
  return list.has(lower) || list.has(lower.replace(/[^\p{L}\p{N}]+$/u, ''))
}

/** Every rule of the policy `password` breaks, as texts of the tables (Unicode-aware letters and digits). */
export function checkPasswordPolicy(password: string, policy: Required<PasswordPolicyOptions>): Message[] {
  const violations: Message[] = []
  const length = [...password].length
  if (length < policy.minLength) violations.push(message('policy_min_length', { min: policy.minLength }))
  if (passwordBytes(password) > MAX_PASSWORD_BYTES) violations.push(TOO_LONG)
  if (policy.requireUppercase && !/\p{Lu}/u.test(password)) violations.push(message('policy_uppercase'))
  if (policy.requireLowercase && !/\p{Ll}/u.test(password)) violations.push(message('policy_lowercase'))
  if (policy.requireNumber && !/\p{N}/u.test(password)) violations.push(message('policy_number'))
  if (policy.requireSpecial && !/[^\p{L}\p{N}]/u.test(password)) violations.push(message('policy_special'))
  if (policy.rejectCommon && isCommonPassword(password)) violations.push(message('policy_common'))
  return violations
}

/** The violation of a password found in data breaches (`breachCheck`). */
export const BREACHED: Message = message('policy_breached')

/** The violation of a password longer than bcrypt can check whole. */
export const TOO_LONG: Message = message('policy_max_bytes', { max: MAX_PASSWORD_BYTES })

/** The answer's text: the built-in rules' texts in the request's locale, a host's violations as it wrote them. */
export function policyMessage(violations: readonly Text[]): Message {
  return message('password_policy_needs', { needs: violations })
}
