import type { H3Event } from 'h3'
import type { AuthUser, CustomClaims, ProviderLoginHandlers, ProviderTokens, UserInfoPayload } from '../../../types/auth'
import type { AuthContext, IdentifiedLogin, ProviderIdentityLogin } from './context'
import { dispatch, getAuthHandlers } from './handlers'
import { withQueryParams } from '../edge/redirect'
import { createAuthCode, type AuthCodeInput } from './records/auth-code'
import type { UpstreamLogin } from './records/record-schema'
import { hostSubjectOf, subjectOf } from './subject'
import { resolveGlobalClaims } from './session-tokens'

export interface CompleteLoginInput {
  event: H3Event
  /** Provider name (`google`, `mock`, `password`, …). */
  provider: string
  /** The profile, already mapped to `sub`, `email`, `name`, `picture` (sub as the provider knows it). */
  user: AuthUser
  tokens: ProviderTokens
  handlers?: ProviderLoginHandlers
  /** Same-origin path for the callback page. */
  redirect?: string
  /** Keep `sub` as it is instead of qualifying it with the provider (password accounts). */
  keepSubject?: boolean
  /** The first factor proved a second already (`passkey`: with user verification): no second factor is asked. */
  secondFactor?: AuthCodeInput['secondFactor']
  /** The OpenID provider login (ID token, provider `sid` and `sub`), kept with the session for logout. */
  upstream?: UpstreamLogin
  /** A native app's PKCE S256 challenge: the code is bound to it instead of the browser (a native login). */
  codeChallenge?: string
}

export interface CompletedLogin {
  /** Where the browser goes next: the callback page with the code, or the second-factor page. */
  location: string
  /** The authorization code; undefined while the login waits for a second factor. */
  code?: string
  /** The pending login's flow id when a second factor is asked (`enrol`: the user enrols first). */
  secondFactor?: { flow: string, enrol: boolean }
  user: AuthUser
  claims: CustomClaims
}

/**
 * The one login pipeline: onUserInfo, the linked user of a provider identity, onUserPersist (its subject wins), custom claims, a feature's
 * detour (the second factor), else onSuccess and `svc:success`, then a bound authorization code.
 */
export async function completeLogin(ctx: AuthContext, input: CompleteLoginInput): Promise<CompletedLogin> {
  const { event, provider, tokens, handlers = {} } = input
  let { payload: { user } } = await dispatch(ctx, 'svc:userInfo', { user: { ...input.user }, tokens, provider, event }, { route: handlers.onUserInfo })

  const providerSub = subjectOf(user)
  if (!providerSub) throw new Error(`Login with ${provider}: the user has no subject (sub or id)`)
  const identity = input.keepSubject ? undefined : await identifyLogin(ctx, { event, provider, subject: providerSub, user })
  user.sub = input.keepSubject ? providerSub : identity?.userId ?? `${provider}:${providerSub}`

  const { onUserPersist } = getAuthHandlers()
  if (onUserPersist) {
    // A password account is stored under its email and hash whatever onUserInfo returned.
    const { email, hashedPassword } = input.user
    const stored = typeof hashedPassword === 'string' ? { ...user, email, hashedPassword } : user
    const persisted = await onUserPersist(stored, { provider, event })
    if (persisted && typeof persisted === 'object') {
      const persistedId = hostSubjectOf(persisted, { given: input.keepSubject ? undefined : input.user })
      // The provider vouched for its own address only: another one from the host's row is not verified unless the row says so.
      const otherEmail = typeof persisted.email === 'string' && persisted.email.trim().toLowerCase() !== String(user.email ?? '').trim().toLowerCase()
      user = { ...user, ...persisted, ...(otherEmail && !('emailVerified' in persisted) ? { emailVerified: false } : {}) }
      if (persistedId) user.sub = persistedId
    }
  }
  await identity?.persisted?.(subjectOf(user)!)

  const providerClaims = typeof handlers.customClaims === 'function'
    ? (await handlers.customClaims(user, tokens)) ?? {}
    : (handlers.customClaims ?? {})
  const claims = await resolveGlobalClaims(ctx, user, providerClaims as CustomClaims)

  const payload: UserInfoPayload = { user, tokens, provider, event }
  if (!input.secondFactor) {
    const login = { event, user: { ...user, sub: subjectOf(user)! }, claims, provider, tokens, redirect: input.redirect, upstream: input.upstream }
    for (const feature of ctx.features) {
      const detour = await feature.detourLogin?.(ctx, login, async () => {
        await dispatch(ctx, 'svc:success', payload, { route: handlers.onSuccess, hook: false })
      })
      if (detour) return { ...detour, user, claims }
    }
  }
  await loginSucceeded(ctx, payload, handlers.onSuccess)

  const code = await createAuthCode(ctx, event, { user, claims, provider, redirect: input.redirect, secondFactor: input.secondFactor, upstream: input.upstream, codeChallenge: input.codeChallenge })
  return { location: callbackLocation(ctx, code), code, user, claims }
}

/**
 * A login succeeded: `onSuccess` of its route, `svc:success`, then the features that keep something of it
 * (the provider's tokens). Runs once per login, before its authorization code.
 */
export async function loginSucceeded(ctx: AuthContext, payload: UserInfoPayload, onSuccess?: ProviderLoginHandlers['onSuccess']): Promise<void> {
  await dispatch(ctx, 'svc:success', payload, { route: onSuccess })
  const userId = subjectOf(payload.user)
  if (!userId) return
  for (const feature of ctx.features) await feature.loginSucceeded?.(ctx, { userId, provider: payload.provider, tokens: payload.tokens })
}

/** The first feature's answer for a provider login's identity ({@link AuthFeature.identifyLogin}). */
async function identifyLogin(ctx: AuthContext, login: ProviderIdentityLogin): Promise<IdentifiedLogin | undefined> {
  for (const feature of ctx.features) {
    const found = await feature.identifyLogin?.(ctx, login)
    if (found) return found
  }
  return undefined
}

/** The callback page with an authorization code: `<callbackPath>?code=<code>`. */
export function callbackLocation(ctx: AuthContext, code: string): string {
  return withQueryParams(ctx.options.endpoints.callbackPath, { code })
}
