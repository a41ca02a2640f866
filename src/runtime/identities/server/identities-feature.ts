/**
 * Linked identities as a core feature: every provider login asks which user its identity is linked to (and links a
 * new account's first identity, or one of the same verified email with `linkByEmail`); a link's provider login ends here.
 */
import type { AuthClaims } from '../../types/auth'
import type { AuthContext, AuthFeature, IdentityLinkRequest, ProviderIdentityLogin } from '../../server/lib/core/context'
import { getAuthHandlers } from '../../server/lib/core/handlers'
import { liveSessionOf } from '../../server/lib/core/recent-login'
import { subjectOf } from '../../server/lib/core/subject'
import { normalizeEmail } from '../../server/lib/edge/email'
import { authErrorCode } from '../../server/lib/edge/errors'
import { withQueryParams } from '../../server/lib/edge/redirect'
import { securityEvent } from '../../server/lib/edge/security-event'
import { isPasswordEnabled } from '../../password/server/password-options'
import { passwordSubject } from '../../password/server/password-handlers'
import { identityHandlers } from './identity-handlers'
import { linkIdentity, removeLoginMethod, type LinkActor } from './identity-links'
import { isIdentitiesEnabled, validateIdentitiesOptions } from './identities-options'
import type { IdentityLinkedVia, LinkedIdentity } from '../identity-types'

const identityOf = ({ provider, subject, user }: ProviderIdentityLogin, userId: string): LinkedIdentity => ({
  provider,
  subject,
  userId,
  ...(typeof user.email === 'string' && user.email ? { email: user.email } : {}),
  linkedAt: new Date().toISOString(),
})

/** Links a login's identity; `false` when a refusal (taken meanwhile, another of the provider) left it unlinked. */
async function linkedByLogin(ctx: AuthContext, login: ProviderIdentityLogin, userId: string, via: IdentityLinkedVia): Promise<boolean> {
  try {
    await linkIdentity(ctx, login.event, identityOf(login, userId), via, { actor: userId })
    return true
  }
  catch (error) {
    if (!authErrorCode(error)) throw error
    return false
  }
}

/**
 * With `linkByEmail`: the subject of the password account of the login's email, when the provider verified that very
 * address (`emailVerified`) and the account's `emailVerified` is `true`; a match that misses either is reported only.
 */
async function accountOfVerifiedEmail(ctx: AuthContext, login: ProviderIdentityLogin): Promise<string | undefined> {
  const findUser = getAuthHandlers().password?.findUser
  const email = typeof login.user.email === 'string' ? normalizeEmail(login.user.email) : undefined
  if (!ctx.options.identities?.linkByEmail || !isPasswordEnabled(ctx.options.providers.password) || !findUser || !email) return undefined
  const account = await findUser(email)
  if (!account || typeof account.hashedPassword !== 'string') return undefined
  const userId = passwordSubject(account, email)
  if (login.user.emailVerified === true && account.emailVerified === true) return userId
  await securityEvent(ctx, login.event, { type: 'identity.refused', outcome: 'failure', actor: null, subject: userId, details: { provider: login.provider, reason: 'unverified_email' } })
  return undefined
}

/** The link a signed-in user started: the identity of the provider login joins their account, and the browser returns to their page. */
async function finishLink(ctx: AuthContext, link: IdentityLinkRequest, login: Omit<ProviderIdentityLogin, 'subject'>): Promise<string> {
  const subject = subjectOf(login.user)
  const back = (params: Record<string, string>) => withQueryParams(link.redirect, params)
  if (!subject) return back({ error: 'invalid_request' })
  // The session that asked must still be alive: a logout or a password reset since then cancels the link.
  if (link.sid && !(await liveSessionOf(ctx, { sub: link.userId, sid: link.sid } as AuthClaims))) return back({ error: 'session_revoked' })
  const by: LinkActor = { actor: link.userId, ...(link.sid ? { session: link.sid } : {}) }
  try {
    await linkIdentity(ctx, login.event, identityOf({ ...login, subject }, link.userId), 'link', by)
  }
  catch (error) {
    const code = authErrorCode(error)
    if (!code) throw error
    return back({ error: code })
  }
  return back({ linked: login.provider })
}

export default {
  name: 'identities',
  optionErrors: options => validateIdentitiesOptions(options),
  async identifyLogin(ctx, login) {
    if (!isIdentitiesEnabled(ctx.options)) return undefined
    const linked = await identityHandlers(login.event).findUserByIdentity(login.provider, login.subject)
    if (linked) return { userId: linked }
    const owner = await accountOfVerifiedEmail(ctx, login)
    if (owner && await linkedByLogin(ctx, login, owner, 'email')) return { userId: owner }
    // A new account (or the host's own match in onUserPersist): its identity is linked to whoever the login ends as.
    return { persisted: async (userId) => {
      await linkedByLogin(ctx, login, userId, 'login')
    } }
  },
  finishLink,
  removeLoginMethod: (ctx, event, caller, method, remove) => isIdentitiesEnabled(ctx.options) ? removeLoginMethod(ctx, event, caller, method, remove) : remove(),
} satisfies AuthFeature
