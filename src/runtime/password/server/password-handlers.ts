import type { H3Event } from 'h3'
import type { AuthUser, PasswordHandlers, PasswordUser, VerificationCodeDetails, VerificationMessageAction } from '../../types/auth'
import { getAuthHandlers, requiredHandler } from '../../server/lib/core/handlers'
import { hostSubjectOf, type SubjectSource } from '../../server/lib/core/subject'

/** The password handlers of the host, checked (alternative names are resolved at registration). */
export interface ResolvedPasswordHandlers {
  findUser(email: string): Promise<PasswordUser | null>
  sendVerificationCode(email: string, code: string, action: VerificationMessageAction, details: VerificationCodeDetails): Promise<void>
  /** Replaces the built-in policy when the host defines it. */
  validatePassword?: (password: string) => boolean | string[] | Promise<boolean | string[]>
  /** True when the host hashes passwords itself (`hashPassword`): bcrypt's 72-byte limit does not apply. */
  customHash: boolean
  customClaims?: PasswordHandlers['customClaims']
}

function isPasswordUser(value: unknown): value is PasswordUser {
  return typeof value === 'object' && value !== null && typeof (value as PasswordUser).email === 'string'
}

/** Reads the registered handlers now (plugins may register them after the server started). */
export function passwordHandlers(): ResolvedPasswordHandlers {
  const handlers = getAuthHandlers().password ?? {}
  return {
    async findUser(email) {
      const user = await requiredHandler('password', 'findUser')(email)
      return isPasswordUser(user) ? user : null
    },
    async sendVerificationCode(email, code, action, details) {
      await requiredHandler('password', 'sendVerificationCode')(email, code, action, details)
    },
    validatePassword: handlers.validatePassword,
    customHash: typeof handlers.hashPassword === 'function',
    customClaims: handlers.customClaims,
  }
}

/** The subject of a password user (a row of `findUser`): {@link hostSubjectOf} (`id`, else `sub`), else `password:<email>`. */
export function passwordSubject(user: SubjectSource, email: string): string {
  return hostSubjectOf(user) ?? `password:${email}`
}

/**
 * The global `onUserPersist` (the provider's `onUserPersist(email, hashedPassword)` is registered as one):
 * password accounts cannot exist without it.
 */
export function requirePersistence(): NonNullable<ReturnType<typeof getAuthHandlers>['onUserPersist']> {
  const persist = getAuthHandlers().onUserPersist
  if (!persist) throw new Error('[svc-auth] The password provider needs onUserPersist (global, or password.onUserPersist) to store password hashes.')
  return persist
}

/** Persists a new password hash (reset, change); returns what the handler returned when it is an object. */
export async function persistPasswordUser(event: H3Event, user: AuthUser & { email: string, hashedPassword: string }): Promise<Record<string, unknown> | undefined> {
  const result = await requirePersistence()(user, { provider: 'password', event })
  return result && typeof result === 'object' ? result : undefined
}
