/**
 * `hashPassword` and `verifyPassword`: the password provider's bcrypt for the host's own code (a
 * registration handler of its own, an import of accounts, an admin setting a password).
 * Auto-imported in server code when `providers.password` is set.
 */
import { authError } from '../../../server/lib/edge/errors'
import { useAuthContext } from '../../../server/utils/auth-context'
import type { BcryptHasher } from '../hashing'
import { usePasswordRuntime } from '../password-runtime'
import { MAX_PASSWORD_BYTES, normalizePassword, passwordBytes, passwordForms, policyMessage, TOO_LONG } from '../policy'

/** `$2a$`, `$2b$`, `$2x$` or `$2y$`, a two-digit cost, then 53 characters of bcrypt's base64. */
const BCRYPT_HASH = /^\$2[abxy]\$\d{2}\$[./A-Za-z0-9]{53}$/

/** True for a string shaped like a bcrypt hash (what the provider stores). */
export function isBcryptHash(value: unknown): value is string {
  return typeof value === 'string' && BCRYPT_HASH.test(value)
}

/** The provider's hasher without the host's handlers: bcrypt at `passwordHashRounds`, in its slots. */
async function bcrypt(): Promise<BcryptHasher> {
  return usePasswordRuntime(await useAuthContext()).hasher.bcrypt
}

/**
 * Hashes a password as the provider does at registration: in Unicode normal form (NFC), with
 * bcrypt at `providers.password.passwordHashRounds` (12 by default), on the provider's engine
 * (`@node-rs/bcrypt` on the thread pool, else bcryptjs in worker threads) and within its
 * `hashConcurrency`. The hash verifies at the provider's login and with `verifyPassword`.
 *
 * Of the provider's policy it applies the length limit only (bcrypt reads 72 bytes, so a longer
 * password is refused rather than cut); the other rules (`passwordPolicy`, `validatePassword`)
 * are the routes' and yours to apply. The host's `hashPassword`/`verifyPassword` handlers, if
 * any, are not used: this is always bcrypt.
 * @param password The password as typed.
 * @returns A standard `$2b$` bcrypt hash.
 * @throws 400 `password_policy` ("at most 72 bytes", an h3 error that answers as such from a
 * route) for a password longer than 72 bytes in UTF-8; a `TypeError` for anything but a string.
 * @example
 * const hashedPassword = await hashPassword(body.password)
 * await db.users.insert({ email, hashedPassword })
 */
export async function hashPassword(password: string): Promise<string> {
  if (typeof password !== 'string') throw new TypeError('hashPassword expects the password as a string')
  const normal = normalizePassword(password)
  if (passwordBytes(normal) > MAX_PASSWORD_BYTES) throw authError('password_policy', policyMessage([TOO_LONG]))
  return (await bcrypt()).hash(normal)
}

/**
 * Checks a password against a stored bcrypt hash as the provider's login does: in normal form
 * (NFC), then as typed if that differs (hashes made before normalisation), never a password over
 * 72 bytes, which cannot match; the comparison of bcrypt itself is constant-time. Accepts every
 * standard bcrypt hash (`$2a$`, `$2b$`, `$2y$`, any cost): the provider's, and those of other
 * bcrypt libraries.
 *
 * Every `false` costs the same bcrypt work, whether the password is wrong, too long, or `hash` is
 * missing or not a bcrypt hash: pass `null` for an unknown account, so the answer's timing does not
 * tell which accounts exist. Note the order of the arguments: the hash comes first (unlike the
 * provider's `verifyPassword(password, hash)` handler).
 * @param hash The stored hash; null, undefined or anything that is not a bcrypt hash never matches.
 * @param password The password as typed.
 * @returns True only when the password matches the hash.
 * @example
 * const user = await db.users.findByEmail(email)
 * if (!(await verifyPassword(user?.hashedPassword ?? null, password))) throw createError({ statusCode: 401 })
 */
export async function verifyPassword(hash: string | null | undefined, password: string): Promise<boolean> {
  const typed = typeof password === 'string' ? password : ''
  const forms = passwordForms(typed)
  // As the provider's checkPassword: a password too long to check whole is never compared, but
  // costs the same work.
  const candidates = passwordBytes(forms[0]!) > MAX_PASSWORD_BYTES ? [] : forms.filter(form => passwordBytes(form) <= MAX_PASSWORD_BYTES)
  const stored = isBcryptHash(hash) ? hash : null
  return (await bcrypt()).verifyFirst(typeof password === 'string' ? candidates : [], stored, forms.length)
}
