import type { H3Event } from 'h3'
import type { AuthUser, CustomClaims, ProviderTokens, UserInfoPayload } from '../../../types/auth'
import type { AuthContext } from './context'
import { getAuthHandlers } from './handlers'
import { withQueryParams } from '../edge/redirect'
import { createAuthCode } from './records/auth-code'
import { hostSubjectOf, subjectOf } from './subject'
import { resolveGlobalClaims } from './session-tokens'

/** Static claims, or a callback of the user and the provider tokens. */
export type ProviderClaims = Record<string, unknown> | ((user: AuthUser, tokens: ProviderTokens) => Record<string, unknown> | void | undefined | Promise<Record<string, unknown> | void | undefined>)

/** Per-provider handlers (from `defineOAuth*EventHandler` or the password provider's options). */
export interface ProviderLoginHandlers {
  customClaims?: ProviderClaims
  onUserInfo?: (payload: UserInfoPayload) => AuthUser | void | undefined | Promise<AuthUser | void | undefined>
  onSuccess?: (payload: UserInfoPayload) => void | Promise<void>
}

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
  /** The first factor proved two factors already (a passkey with user verification): no second factor. */
  multiFactor?: boolean
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
 * The one login pipeline every provider ends in: the provider's then the global onUserInfo, `svc:userInfo`,
 * onUserPersist (its subject wins: {@link hostSubjectOf}, else `<provider>:<sub>`), custom claims, then a
 * feature's detour (`AuthFeature.detourLogin`: a second factor, unless `multiFactor`), else `svc:success`
 * and the provider's onSuccess, and a single-use authorization code bound to the browser of `event`.
 */
export async function completeLogin(ctx: AuthContext, input: CompleteLoginInput): Promise<CompletedLogin> {
  const global = getAuthHandlers()
  const { event, provider, tokens, handlers = {} } = input
  let user: AuthUser = { ...input.user }

  for (const onUserInfo of [handlers.onUserInfo, global.onUserInfo]) {
    if (!onUserInfo) continue
    const replaced = await onUserInfo({ user, tokens, provider, event })
    if (replaced && typeof replaced === 'object') user = replaced
  }
  await ctx.callHook('svc:userInfo', { user, tokens, provider, event })

  const providerSub = subjectOf(user)
  if (!providerSub) throw new Error(`Login with ${provider}: the user has no subject (sub or id)`)
  user.sub = input.keepSubject ? providerSub : `${provider}:${providerSub}`

  if (global.onUserPersist) {
    const persisted = await global.onUserPersist(user, { provider, event })
    if (persisted && typeof persisted === 'object') {
      const persistedId = hostSubjectOf(persisted, { given: input.keepSubject ? undefined : input.user })
      user = { ...user, ...persisted }
      if (persistedId) user.sub = persistedId
    }
  }

  const providerClaims = typeof handlers.customClaims === 'function'
    ? (await handlers.customClaims(user, tokens)) ?? {}
    : (handlers.customClaims ?? {})
  const claims = await resolveGlobalClaims(ctx, user, providerClaims as CustomClaims)

  const payload: UserInfoPayload = { user, tokens, provider, event }
  if (!input.multiFactor) {
    const login = { event, user: { ...user, sub: subjectOf(user)! }, claims, provider, tokens, redirect: input.redirect }
    for (const feature of ctx.features) {
      const detour = await feature.detourLogin?.(ctx, login, async () => {
        await handlers.onSuccess?.(payload)
      })
      if (detour) return { ...detour, user, claims }
    }
  }
  await ctx.callHook('svc:success', payload)
  await handlers.onSuccess?.(payload)

  const code = await createAuthCode(ctx, event, { user, claims, provider, redirect: input.redirect })
  return { location: callbackLocation(ctx, code), code, user, claims }
}

/** The callback page with an authorization code: `<callbackPath>?code=<code>`. */
export function callbackLocation(ctx: AuthContext, code: string): string {
  return withQueryParams(ctx.options.endpoints.callbackPath, { code })
}
