/** How else than through its linked identities an account can log in: what an unlink must leave. */
import type { H3Event } from 'h3'
import type { AuthClaims } from '../../types/auth'
import type { AuthContext } from '../../server/lib/core/context'
import { getAuthHandlers } from '../../server/lib/core/handlers'
import { normalizeEmail } from '../../server/lib/edge/email'
import { isPasswordEnabled } from '../../password/server/password-options'
import { passwordSubject } from '../../password/server/password-handlers'
import { isPasskeyEnabled } from '../../passkey/server/passkey-options'
import { passkeyHandlers } from '../../passkey/server/passkey-handlers'

/** The ways besides linked identities, each with how many of it the account has (0: none). */
export interface OtherLoginMethods {
  /** 1 when the password provider's account of the user's email is this user's and has a hash. */
  password: number
  /** The user's passkeys (the passkey provider on). */
  passkeys: number
}

type Counter = (ctx: AuthContext, event: H3Event, user: AuthClaims) => Promise<number>

/**
 * One counter per way to log in that a provider of the build offers (a provider added later adds its own here):
 * each asks the host's handlers only when its provider is on.
 */
const COUNTERS: { [K in keyof OtherLoginMethods]: Counter } = {
  async password(ctx, _event, user) {
    const findUser = getAuthHandlers().password?.findUser
    const email = typeof user.email === 'string' ? normalizeEmail(user.email) : undefined
    if (!isPasswordEnabled(ctx.options.providers.password) || !findUser || !email) return 0
    const account = await findUser(email)
    const hashed = !!account && typeof account.hashedPassword === 'string' && account.hashedPassword !== ''
    return hashed && passwordSubject(account, email) === user.sub ? 1 : 0
  },
  async passkeys(ctx, event, user) {
    if (!isPasskeyEnabled(ctx.options.providers.passkey) || !getAuthHandlers().passkey?.listCredentials) return 0
    return (await passkeyHandlers(event).listCredentials(user.sub)).length
  },
}

/** How the user logs in besides their linked identities. */
export async function otherLoginMethods(ctx: AuthContext, event: H3Event, user: AuthClaims): Promise<OtherLoginMethods> {
  const entries = await Promise.all(Object.entries(COUNTERS).map(async ([name, count]) => [name, await count(ctx, event, user)] as const))
  return Object.fromEntries(entries) as unknown as OtherLoginMethods
}

/** How many ways in {@link OtherLoginMethods} counts. */
export const countOf = (methods: OtherLoginMethods): number => Object.values(methods).reduce((sum, n) => sum + n, 0)
