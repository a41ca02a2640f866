import type { H3Event } from 'h3'
import type { AuthUser, MagicCodeAction, PasswordHandlers, PasswordUser, VerificationCodeDetails } from '../../types/auth'
import { getAuthHandlers } from '../../server/lib/core/handlers'
import { hostSubjectOf, type SubjectSource } from '../../server/lib/core/subject'

/** The password handlers of the host, with the alternative names resolved. */
export interface ResolvedPasswordHandlers {
  findUser(email: string): Promise<PasswordUser | null>
  sendVerificationCode(email: string, code: string, action: MagicCodeAction, details: VerificationCodeDetails): Promise<void>
  /** Replaces the built-in policy when the host defines it. */
  validatePassword?: (password: string) => boolean | string[] | Promise<boolean | string[]>
  /** True when the host hashes passwords itself (`hashPassword`): bcrypt's 72-byte limit does not apply. */
  customHash: boolean
  customClaims?: PasswordHandlers['customClaims']
}

function missing(name: string, alternative: string): Error {
  return new Error(`[svc-auth] The password provider needs a "${name}" handler (or "${alternative}"): defineAuthHandlers({ password: { ${name} } }) in a Nitro plugin.`)
}

function isPasswordUser(value: unknown): value is PasswordUser {
  return typeof value === 'object' && value !== null && typeof (value as PasswordUser).email === 'string'
}

/** Reads the registered handlers now (plugins may register them after the server started). */
export function passwordHandlers(): ResolvedPasswordHandlers {
  const handlers = getAuthHandlers().password ?? {}
  const find = handlers.findUser ?? handlers.onUserLookup
  const send = handlers.sendVerificationCode ?? handlers.onMagicCodeGenerated
  return {
    async findUser(email) {
      if (!find) throw missing('findUser', 'onUserLookup')
      const user = await find(email)
      return isPasswordUser(user) ? user : null
    },
    async sendVerificationCode(email, code, action, details) {
      if (!send) throw missing('sendVerificationCode', 'onMagicCodeGenerated')
      await send(email, code, action, details)
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
 * Persists a new password hash: the global `onUserPersist(user, { provider: 'password', event })`, else the
 * provider's `onUserPersist(email, hashedPassword)`. Returns what it returned when an object.
 */
export async function persistPasswordUser(event: H3Event, user: AuthUser & { email: string, hashedPassword: string }): Promise<Record<string, unknown> | undefined> {
  const handlers = getAuthHandlers()
  let result: unknown
  if (handlers.onUserPersist) result = await handlers.onUserPersist(user, { provider: 'password', event })
  else if (handlers.password?.onUserPersist) result = await handlers.password.onUserPersist(user.email, user.hashedPassword)
  else throw new Error('[svc-auth] The password provider needs onUserPersist (global, or password.onUserPersist) to store password hashes.')
  return result && typeof result === 'object' ? result as Record<string, unknown> : undefined
}

/** Before a login's pipeline: without a global onUserPersist, the provider's is called here; its answer is merged into the user. */
export async function persistWithProviderHandler(user: AuthUser & { email: string, hashedPassword: string }): Promise<AuthUser> {
  const handlers = getAuthHandlers()
  if (handlers.onUserPersist) return user
  const persist = handlers.password?.onUserPersist
  if (!persist) throw new Error('[svc-auth] The password provider needs onUserPersist (global, or password.onUserPersist) to store users.')
  const result = await persist(user.email, user.hashedPassword)
  if (!result || typeof result !== 'object') return user
  const merged: AuthUser = { ...user, ...(result as Record<string, unknown>) }
  const subject = hostSubjectOf(result as SubjectSource)
  if (subject) merged.sub = subject
  return merged
}
