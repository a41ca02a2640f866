/** How else than through its linked identities an account can log in: what an unlink must leave. */
import type { H3Event } from 'h3'
import type { AuthClaims, PasswordUser } from '../../types/auth'
import type { AuthContext } from '../../server/lib/core/context'
import { getAuthHandlers } from '../../server/lib/core/handlers'
import { normalizeEmail } from '../../server/lib/edge/email'
import { isPasswordEnabled } from '../../password/server/password-options'
import { passwordSubject } from '../../password/server/password-handlers'
import { isPasskeyEnabled } from '../../passkey/server/passkey-options'
import { passkeyHandlers } from '../../passkey/server/passkey-handlers'
import { isMagicLinkEnabled } from '../../magic-link/server/magic-link-options'

/** The ways besides linked identities, each with how many of it the account has (0: none). */
export interface OtherLoginMethods {
  /** 1 when the password provider's account of the user's email is this user's and has a hash. */
  password: number
  /** 1 when magic links are on and the account of the user's email (which a link logs into) is this user's. */
  magicLink: number
  /** The user's passkeys (the passkey provider on). */
  passkeys: number
}

type Counter = (ctx: AuthContext, event: H3Event, user: AuthClaims) => Promise<number>

/** The host's account of the user's email (`password.findUser`) when it is this user's, else null. */
async function ownAccount(user: AuthClaims): Promise<PasswordUser | null> {
  const findUser = getAuthHandlers().password?.findUser
  const email = typeof user.email === 'string' ? normalizeEmail(user.email) : undefined
  const account = findUser && email ? await findUser(email) : null
  return account && typeof account === 'object' && passwordSubject(account, email!) === user.sub ? account : null
}

/**
 * One counter per way to log in that a provider of the build offers (a provider added later adds its own here):
 * each asks the host's handlers only when its provider is on.
 */
const COUNTERS: { [K in keyof OtherLoginMethods]: Counter } = {
  async password(ctx, _event, user) {
    if (!isPasswordEnabled(ctx.options.providers.password)) return 0
    const hash = (await ownAccount(user))?.hashedPassword
    return typeof hash === 'string' && hash !== '' ? 1 : 0
  },
  async magicLink(ctx, _event, user) {
    return isMagicLinkEnabled(ctx.options.providers.magicLink) && await ownAccount(user) ? 1 : 0
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
