import { z } from 'zod'
import { authError } from '../errors'

const EMAIL = z.email()

/** Longest address accepted (RFC 5321 path limit). */
export const MAX_EMAIL_LENGTH = 254

/** Trims and lowercases an address, or undefined when it is not a valid email. */
export function normalizeEmail(value: string): string | undefined {
  const email = value.trim().toLowerCase()
  if (!email || email.length > MAX_EMAIL_LENGTH) return undefined
  return EMAIL.safeParse(email).success ? email : undefined
}

/** {@link normalizeEmail}, or a 400 `invalid_email`. */
export function requireEmail(value: string): string {
  const email = normalizeEmail(value)
  if (!email) throw authError(400, 'invalid_email', 'Invalid email format')
  return email
}
