import { domainToASCII, domainToUnicode } from 'node:url'
import { z } from 'zod'
import { authError } from './errors'
import { MAX_EMAIL_LENGTH } from './request-schemas'

const EMAIL = z.email()

export { MAX_EMAIL_LENGTH }

/**
 * The canonical address (trimmed, NFC, lowercase, domain in ASCII by UTS #46), or undefined when
 * invalid: the local part must be ASCII, the whole at most 254 characters.
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

/** A DNS host name in ASCII: 2+ labels of letters, digits, hyphens (1–63, no hyphen at the ends), a non-numeric TLD. */
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
