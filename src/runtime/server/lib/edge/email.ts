import { domainToASCII, domainToUnicode } from 'node:url'
import { z } from 'zod'
import { authError } from './errors'
import { MAX_EMAIL_LENGTH } from './request-schemas'

const EMAIL = z.email()

export { MAX_EMAIL_LENGTH }

/**
 * The canonical form of an address, or undefined when it is not a valid email. Every address is
 * compared and handed to the host in this one form:
 * - trimmed, NFC-normalised, lowercase;
 * - the domain processed by UTS #46 (as browsers do) and written in its ASCII form:
 *   `user@BÜCHER.de`, `user@bücher.de` and `user@xn--bcher-kva.de` are all `user@xn--bcher-kva.de`.
 *   ASCII is what every address accepted before internationalised domains already was, so no
 *   stored address changes form; show the Unicode form with `node:url`'s `domainToUnicode`.
 * The local part must be ASCII (as `z.email()` checks it); the address fits in 254 characters.
 */
export function normalizeEmail(value: string): string | undefined {
  const email = value.trim().normalize('NFC').toLowerCase()
  const at = email.lastIndexOf('@')
  if (at <= 0 || at === email.length - 1) return undefined
  const local = email.slice(0, at)
  const ascii = domainToASCII(email.slice(at + 1))
  if (!isHostName(ascii) || `${local}@${ascii}`.length > MAX_EMAIL_LENGTH) return undefined
  // The local part by zod's rules (on a neutral domain: zod's TLD rule knows no `xn--` TLDs).
  if (!EMAIL.safeParse(`${local}@example.com`).success) return undefined
  if (domainToUnicode(ascii).split('.').some(label => label.startsWith('-') || label.endsWith('-'))) return undefined
  return `${local}@${ascii}`
}

/**
 * A DNS host name in ASCII: two or more labels of letters, digits and hyphens, 1–63 characters
 * each, no hyphen at either end, and a top-level label that is not all digits. (The Unicode
 * labels are checked for hyphens at their ends as well.)
 */
function isHostName(ascii: string): boolean {
  const labels = ascii.split('.')
  if (labels.length < 2 || /^\d+$/.test(labels.at(-1)!)) return false
  return labels.every(label => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label))
}

/** {@link normalizeEmail}, or a 400 `invalid_email`. */
export function requireEmail(value: string): string {
  const email = normalizeEmail(value)
  if (!email) throw authError('invalid_email')
  return email
}
