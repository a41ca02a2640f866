/** Logging in with an emailed link: asked for in one browser, opened in it or elsewhere, spent once. */
import type { H3Event } from 'h3'
import type { AuthContext } from '../../server/lib/core/context'
import { browserBindingOf, matchesCodeBinding } from '../../server/lib/core/code-binding'
import { hasGlobalUserPersist } from '../../server/lib/core/handlers'
import { completeLogin } from '../../server/lib/core/login'
import type { RecordKey } from '../../server/lib/store/record-store'
import { requireEmail } from '../../server/lib/edge/email'
import { authError, message, renderText } from '../../server/lib/edge/errors'
import { localizedEmail, requestLocale } from '../../server/lib/core/locale-of'
import { enforceRateLimit } from '../../server/lib/edge/rate-limit'
import { isSafeRedirect } from '../../server/lib/edge/redirect'
import { guarded } from '../../server/lib/edge/route-contract'
import { refusalWindow, securityEvent } from '../../server/lib/edge/security-event'
import { createMagicCode, discardMagicCode, readMagicCode } from '../../password/server/magic-code'
import { afterAnswer, verifyCode } from '../../password/server/email-codes'
import { passwordHandlers, passwordSubject } from '../../password/server/password-handlers'
import { createMagicLink, magicLinkKey, readMagicLink, takeMagicLink, type MagicLinkRecord } from './magic-link-records'
import { useMagicLinkOptions } from './magic-link-options'
import { MAGIC_LINK_ROUTES } from './magic-link-routes'

const PROVIDER = 'magicLink'

/** A refused link or code, recorded as a failed login of this provider; made-up links and codes tried in another browser, one event per client each 5 minutes. */
function refused(ctx: AuthContext, event: H3Event, reason: 'invalid_link' | 'other_browser' | 'unknown_account'): Promise<void> {
  const aggregate = reason === 'unknown_account' ? undefined : refusalWindow(ctx, event, `${PROVIDER}:${reason}`)
  return securityEvent(ctx, event, { type: 'login', outcome: 'failure', actor: null, details: { provider: PROVIDER, reason }, ...(aggregate ? { aggregate } : {}) })
}

/**
 * POST `<authPath>/magic-link`: the same answer for every address. This browser is bound first (the code cookie); the
 * lookup, the link and its delivery happen after the answer, so neither it nor its timing tells whether the account exists.
 */
export const requestMagicLink = guarded(MAGIC_LINK_ROUTES.request, async (ctx: AuthContext, event, body) => {
  const email = requireEmail(body.email)
  await enforceRateLimit(ctx, event, 'magicLink', { ip: false, email })
  const options = useMagicLinkOptions(ctx)
  const redirect = isSafeRedirect(body.redirect) ? body.redirect : undefined
  const binding = browserBindingOf(event, ctx, options.ttl)
  // The locale first, for every request alike: the link's email is in it too.
  const answer = renderText(message('magic_link_requested'), (await requestLocale(ctx, event)).lookup)
  afterAnswer(event, async () => {
    const handlers = passwordHandlers()
    if (!(await handlers.findUser(email)) && !options.allowSignUp) return
    const token = await createMagicLink(ctx, { email, binding, ...(redirect ? { redirect } : {}) }, options.ttl)
    const base = (ctx.options.publicUrl ?? '').replace(/\/+$/, '')
    const link = `${base}${ctx.options.endpoints.magicLinkPath}#token=${token}`
    try {
      // The link is the secret: no code, no flow.
      const localized = await localizedEmail(ctx, event, 'magic_link', { link, minutes: Math.ceil(options.ttl / 60) })
      await handlers.sendVerificationCode(email, '', 'magic_link', { link, flow: '', expiresAt: new Date(Date.now() + options.ttl * 1000), ...localized })
    }
    catch (error) {
      await ctx.store.remove(magicLinkKey(ctx, token))
      throw error
    }
  }, error => ctx.logger.error('Sending a login link failed', error))
  return { success: true as const, message: answer }
})

/**
 * POST `<authPath>/magic-link/redeem`, from the link's page: in the browser that asked (or with `thisDevice`) the link
 * is spent and this browser logged in; elsewhere a short code for the browser that asked, the link left unspent.
 */
export const redeemMagicLink = guarded(MAGIC_LINK_ROUTES.redeem, async (ctx: AuthContext, event, body) => {
  const key = magicLinkKey(ctx, body.token)
  const link = await readMagicLink(ctx, key)
  if (!link) {
    await refused(ctx, event, 'invalid_link')
    throw authError('invalid_magic_link')
  }
  if (body.thisDevice || matchesCodeBinding(event, ctx, link.binding)) return logIn(ctx, event, key)
  // At most as long as the link lives; a second opening replaces the code.
  const ttlSeconds = Math.max(1, Math.min(await ctx.store.ttl(key) ?? 0, useMagicLinkOptions(ctx).ttl))
  const { code } = await createMagicCode(ctx, { email: link.email, action: 'magic_link', data: { link: key.current }, ttlSeconds })
  // The account is named, so that someone who did not ask for this link sees whose it is before pressing the button.
  return { success: true as const, code, email: link.email }
})

/** The link a short code was shown for (its record's `data.link`), if still pending. */
async function linkOfCode(ctx: AuthContext, data: { link?: unknown } | undefined): Promise<{ key: RecordKey, link: MagicLinkRecord | null } | null> {
  if (typeof data?.link !== 'string') return null
  const key = ctx.store.at(data.link)
  return { key, link: await readMagicLink(ctx, key) }
}

/**
 * POST `<authPath>/magic-link/code`: the short code of a link opened elsewhere, in the browser that asked for it. The
 * address is required (no lookup by the code alone, which no code's attempt limit counts), and another browser's
 * guesses are refused before they count: they use up neither the code's attempts nor the address's failures, spend
 * nothing, and answer as if no code were pending.
 */
export const enterMagicLinkCode = guarded(MAGIC_LINK_ROUTES.code, async (ctx: AuthContext, event, body) => {
  const options = useMagicLinkOptions(ctx)
  const email = requireEmail(body.email)
  const pending = await linkOfCode(ctx, (await readMagicCode<{ link?: unknown }>(ctx, 'magic_link', email))?.data)
  if (pending?.link && !matchesCodeBinding(event, ctx, pending.link.binding)) {
    await refused(ctx, event, 'other_browser')
    throw authError('invalid_verification_code')
  }
  const record = await verifyCode<{ link?: unknown }>(ctx, event, { magicCodeTTL: options.ttl, magicCodeMaxAttempts: options.codeMaxAttempts }, 'magic_link', { code: body.code, email })
  // Checked again: a re-opening may have replaced the code between the two reads.
  const spent = await linkOfCode(ctx, record.data)
  if (!spent?.link || !matchesCodeBinding(event, ctx, spent.link.binding)) {
    await refused(ctx, event, spent?.link ? 'other_browser' : 'invalid_link')
    throw authError('invalid_verification_code')
  }
  return logIn(ctx, event, spent.key)
})

/**
 * Spends the link and logs in its account through the login pipeline (`provider: 'magicLink'`; the link proved the
 * address). An address without an account signs up only with `allowSignUp` (`onUserPersist` creates it).
 */
async function logIn(ctx: AuthContext, event: H3Event, key: RecordKey): Promise<{ success: true, redirect: string }> {
  const link = await takeMagicLink(ctx, key)
  if (!link) {
    await refused(ctx, event, 'invalid_link')
    throw authError('invalid_magic_link')
  }
  // A short code of this link that is still pending can no longer log anyone in.
  await discardMagicCode(ctx, 'magic_link', link.email)
  const { email } = link
  const found = await passwordHandlers().findUser(email)
  if (!found && !useMagicLinkOptions(ctx).allowSignUp) {
    // The account was removed since the link was sent.
    await refused(ctx, event, 'unknown_account')
    throw authError('invalid_magic_link')
  }
  // The password provider's onUserPersist(email, hash) answers provider `password` only: it would create nothing.
  if (!found && !hasGlobalUserPersist()) throw new Error('[svc-auth] providers.magicLink.allowSignUp needs a global onUserPersist to create accounts (password.onUserPersist stores password hashes only).')
  const { hashedPassword: _hash, ...profile } = found ?? {}
  const { location } = await completeLogin(ctx, {
    event,
    provider: PROVIDER,
    user: { ...profile, email, emailVerified: true, sub: passwordSubject(found ?? {}, email) },
    tokens: { access_token: '' },
    keepSubject: true,
    redirect: link.redirect,
  })
  return { success: true, redirect: location }
}
