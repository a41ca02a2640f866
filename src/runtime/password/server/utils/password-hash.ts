/**
 * `hashPassword` and `verifyPassword`: the password provider's bcrypt for the host's own code (imports,
 * admin tools). Auto-imported in server code when `providers.password` is set.
 */
import { authError } from '../../../server/lib/edge/errors'
import { useAuthContext } from '../../../server/utils/auth-context'
import type { BcryptHasher } from '../hashing'
import { usePasswordRuntime } from '../password-runtime'
import { MAX_PASSWORD_BYTES, normalizePassword, passwordBytes, passwordForms, policyMessage, TOO_LONG } from '../policy'

const BCRYPT_HASH = /^\$2[abxy]\$\d{2}\$[./A-Za-z0-9]{53}$/

/** True for a string shaped like a bcrypt hash (what the provider stores). */
export function isBcryptHash(value: unknown): value is string {
  return typeof value === 'string' && BCRYPT_HASH.test(value)
}

async function bcrypt(): Promise<BcryptHasher> {
  return usePasswordRuntime(await useAuthContext()).hasher.bcrypt
}

/**
 * Hashes a password as the provider does at registration (NFC, bcrypt at `passwordHashRounds`, within its
 * `hashConcurrency`; never the host's `hashPassword`). Of the policy only the 72-byte limit applies.
 * @returns A standard `$2b$` bcrypt hash.
 * @throws 400 `password_policy` for a password over 72 bytes in UTF-8; a `TypeError` for a non-string.
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
 * Checks a password against any standard bcrypt hash as the provider's login does. Every `false` costs the
 * same work: pass `null` for an unknown account. The arguments come in the `verifyPassword` handler's order.
 * @example
 * const user = await db.users.findByEmail(email)
 * if (!(await verifyPassword(password, user?.hashedPassword ?? null))) throw createError({ statusCode: 401 })
 */
export async function verifyPassword(password: string, hash: string | null | undefined): Promise<boolean> {
  const { candidates, work } = passwordForms(typeof password === 'string' ? password : '', MAX_PASSWORD_BYTES)
  const stored = isBcryptHash(hash) ? hash : null
  return (await bcrypt()).verifyFirst(typeof password === 'string' ? candidates : [], stored, work)
}
