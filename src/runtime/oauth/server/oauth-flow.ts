import type { H3Event } from 'h3'
import { getQuery, getRequestURL, isError, sendRedirect } from 'h3'
import * as oauth from 'oauth4webapi'
import { z } from 'zod'
import type { ProviderLoginHandlers, ProviderTokens } from '../../types/auth'
import type { UpstreamLogin } from '../../server/lib/core/records/record-schema'
import type { OAuthErrorPayload, OAuthEventHandlerOptions } from '../oauth-types'
import { browserBindingOf, matchesCodeBinding } from '../../server/lib/core/code-binding'
import type { AuthContext, AuthFeature, IdentityLinkRequest } from '../../server/lib/core/context'
import { safeEqual } from '../../server/lib/store/crypto'
import { originOf } from '../../server/lib/edge/origin'
import { requestRefused } from '../../server/lib/edge/security-event'
import { completeLogin } from '../../server/lib/core/login'
import { saveOAuthState, takeOAuthState, type NativeReturn } from './oauth-state'
import { clearLoginCookies, LOGIN_TTL, readLoginCookies, setLoginCookies } from './oauth-cookies'
import { exchangeCode, fetchUser, OAuthLoginError } from './exchange'
import { authorizationServerOf, guardedFetch } from './provider-http'
import type { ProviderFetch, ResolvedProvider } from './preset'
import { providerOf } from './provider-registry'
import { isErrorCode, isSafeRedirect, sanitizeErrorText } from '../../server/lib/edge/redirect'
import { nativeLocation, sendLoginError, type LoginReturn } from './login-error'
import { underPath } from '../../shared/paths'

/** Origin of the mock provider without a public URL: endpoints are reached in process (path only), the browser gets relative URLs. */
const IN_PROCESS_ORIGIN = 'http://in-process.invalid'

export interface OAuthRequestOptions {
  name: string
  /** Handlers (and a `config` override) of a host route. */
  handlers?: OAuthEventHandlerOptions<object>
  fetch?: ProviderFetch
  /** Fetch for the endpoints of a provider served by this app (in Nitro: an in-process call). */
  localFetch?: ProviderFetch
  /**
   * Starts the login of a native app (its redirect URI checked already): the provider returns to the
   * provider's login route as usual, which then sends the code (bound to the challenge) or the error to the app.
   */
  native?: NativeReturn
  /** Starts a signed-in user's link of the provider's identity: the provider returns to its login route, which links instead of logging in. */
  link?: IdentityLinkRequest
}

const text = (max: number) => z.string().max(max).optional()

/** The query of GET <loginPath>/<provider>; unknown parameters (scope, authuser, …) are ignored. */
const querySchema = z.object({
  code: text(4096),
  state: text(512),
  error: text(256),
  error_description: text(2048),
  iss: text(2048),
  redirect: text(4096),
})

/** Longest value of a login-route query parameter passed on to the provider. */
const MAX_FORWARDED = 320

type LoginQuery = z.output<typeof querySchema>

/**
 * GET <loginPath>/<provider>: without `code`, `state` or `error` it starts a login (302 to the provider);
 * otherwise it finishes one (302 to `<callbackPath>?code=…`, or to `redirect.error` on failure).
 */
export async function handleOAuthRequest(event: H3Event, ctx: AuthContext, options: OAuthRequestOptions): Promise<void> {
  const { name, handlers = {} } = options
  const provider = providerOf(ctx, name, handlers.config)
  const rawQuery = getQuery(event)
  const isCallback = !options.native && ['code', 'state', 'error'].some(key => Object.hasOwn(rawQuery, key))
  // Where the login continues once it is known to be a native app's or a link (its state record taken), for its errors too.
  const flow: LoginReturn = { native: options.native }
  try {
    const setup = flowSetup(event, ctx, provider, options)
    const parsed = querySchema.safeParse(rawQuery)
    if (!parsed.success) {
      if (isCallback) endStartedLogin(event, ctx, rawQuery.state)
      throw new OAuthLoginError('invalid_request', 'The login request is malformed', isCallback ? 'provider' : 'start')
    }
    if (!isCallback) {
      const location = await startLogin(event, ctx, provider, parsed.data, { ...setup, forwarded: forwardedParams(provider, rawQuery), native: options.native })
      return await sendRedirect(event, location, 302)
    }
    const location = await finishLogin(event, ctx, provider, parsed.data, { ...setup, handlers, flow })
    return await sendRedirect(event, location, 302)
  }
  catch (error) {
    // Anything unexpected (storage down, a bug) still ends on the error page, never a 500.
    const failure = error instanceof OAuthLoginError
      ? error
      : new OAuthLoginError('server_error', 'The login could not be completed', isCallback ? 'login' : 'start', error)
    return await sendLoginError(event, ctx, provider.name, handlers, failure, flow)
  }
}

/**
 * Starts a provider login that links the provider's identity to a signed-in user (POST <authPath>/link/:provider):
 * the provider's authorization URL. Throws {@link OAuthLoginError}.
 */
export async function startLinkLogin(event: H3Event, ctx: AuthContext, options: Omit<OAuthRequestOptions, 'handlers' | 'native'> & { link: IdentityLinkRequest }): Promise<string> {
  const provider = providerOf(ctx, options.name, undefined)
  return startLogin(event, ctx, provider, {}, { ...flowSetup(event, ctx, provider, options), forwarded: forwardedParams(provider, getQuery(event)), link: options.link })
}

/** The URLs of a login: the origin, the provider's redirect URI (its login route), the fetch for its endpoints. */
function flowSetup(event: H3Event, ctx: AuthContext, provider: ResolvedProvider, options: Omit<OAuthRequestOptions, 'name'>) {
  const requestUrl = getRequestURL(event)
  const fetchFn = provider.local && options.localFetch ? options.localFetch : guardedFetch(options.fetch)
  const publicOrigin = ctx.options.publicUrl ? originOf(ctx.options.publicUrl) : undefined
  // The mock never builds a URL from the Host header: without a public URL it uses relative paths and in-process calls.
  const relative = provider.local && !publicOrigin
  const origin = publicOrigin ?? (relative ? IN_PROCESS_ORIGIN : requestUrl.origin)
  // A native login or a link starts elsewhere; the provider returns to the provider's login route all the same.
  const callbackPath = options.native || options.link ? underPath(ctx.options.endpoints.loginPath, provider.name) : requestUrl.pathname
  const redirectUri = provider.redirectUrl ?? (relative ? callbackPath : `${origin}${callbackPath}`)
  return { requestUrl, fetchFn, relative, origin, redirectUri }
}

/** The login-route query parameters the provider takes over (the mock's `user` and `mock_error`). */
function forwardedParams(provider: ResolvedProvider, query: Record<string, unknown>): Record<string, string> {
  const params: Record<string, string> = {}
  for (const [from, to] of Object.entries(provider.forwardedQuery)) {
    const value = query[from]
    if (value === undefined) continue
    if (typeof value !== 'string' || value.length > MAX_FORWARDED) throw new OAuthLoginError('invalid_request', 'The login request is malformed', 'start')
    params[to] = value
  }
  return params
}

interface StartContext {
  redirectUri: string
  origin: string
  /** Send the browser to a relative URL (the mock provider without a public URL). */
  relative: boolean
  fetchFn: ProviderFetch
  forwarded: Record<string, string>
  native?: NativeReturn
  link?: IdentityLinkRequest
}

async function startLogin(event: H3Event, ctx: AuthContext, provider: ResolvedProvider, query: LoginQuery, start: StartContext): Promise<string> {
  if (!provider.clientId || !provider.clientSecret) {
    ctx.logger.error(`Provider ${provider.name}: clientId and clientSecret are required`)
    throw new OAuthLoginError('server_error', 'This login provider is not configured', 'start')
  }
  let redirect: string | undefined
  if (query.redirect !== undefined && !start.native && !start.link) {
    if (isSafeRedirect(query.redirect)) redirect = query.redirect
    else await requestRefused(ctx, event, 'redirect', { details: { provider: provider.name } })
  }
  const as = await metadataOf(ctx, provider, start.origin, start.fetchFn, 'start')

  const state = oauth.generateRandomState()
  const verifier = oauth.generateRandomCodeVerifier()
  const nonce = provider.openid ? oauth.generateRandomNonce() : undefined
  // The state is bound to this browser, so a state planted in another (cookie tossing) is refused.
  const purpose = start.native ? { native: start.native } : start.link ? { link: start.link } : {}
  await saveOAuthState(ctx, state, { provider: provider.name, redirectUri: start.redirectUri, redirect, binding: browserBindingOf(event, ctx, LOGIN_TTL), ...purpose }, LOGIN_TTL)
  setLoginCookies(event, ctx, { state, verifier, nonce })

  const url = new URL(as.authorization_endpoint!)
  const params: Record<string, string> = { ...provider.authorizationParams, ...start.forwarded }
  Object.assign(params, {
    response_type: 'code',
    client_id: provider.clientId,
    redirect_uri: start.redirectUri,
    scope: provider.scopes.join(' '),
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  })
  if (nonce) params.nonce = nonce
  else delete params.nonce
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value)
  return start.relative ? `${url.pathname}${url.search}` : url.href
}

async function metadataOf(ctx: AuthContext, provider: ResolvedProvider, origin: string, fetchFn: ProviderFetch, stage: OAuthErrorPayload['stage']): Promise<oauth.AuthorizationServer> {
  try {
    return await authorizationServerOf(provider, origin, fetchFn)
  }
  catch (cause) {
    throw new OAuthLoginError('provider_unavailable', 'The login provider could not be reached', stage, cause)
  }
}

interface FinishContext {
  requestUrl: URL
  origin: string
  fetchFn: ProviderFetch
  handlers: OAuthEventHandlerOptions<object>
  /** Set to the native app or the link of the login once its state record is taken. */
  flow: LoginReturn
}

const PROVIDER_ERROR_TEXT: Record<string, string> = {
  access_denied: 'The login was cancelled or refused at the provider',
}

async function finishLogin(event: H3Event, ctx: AuthContext, provider: ResolvedProvider, query: LoginQuery, finish: FinishContext): Promise<string> {
  const cookies = readLoginCookies(event, ctx)

  // The state must be the one this browser was given, unused, and started by this browser.
  const { state } = query
  if (!state || !endStartedLogin(event, ctx, state, cookies)) {
    throw new OAuthLoginError('invalid_state', 'The login session is missing or does not match: start the login again', 'state')
  }
  const record = await takeOAuthState(ctx, state)
  if (!record || record.provider !== provider.name) {
    throw new OAuthLoginError('invalid_state', 'The login session has expired or was already used: start the login again', 'state')
  }
  Object.assign(finish.flow, { native: record.native, link: record.link })
  if (!matchesCodeBinding(event, ctx, record.binding)) {
    throw new OAuthLoginError('invalid_state', 'This login was started in another browser: start the login again', 'state')
  }
  if (query.error !== undefined) {
    const code = isErrorCode(query.error) ? query.error : 'provider_error'
    const description = sanitizeErrorText(query.error_description ?? '') || PROVIDER_ERROR_TEXT[code] || 'The login provider reported an error'
    throw new OAuthLoginError(code, description, 'provider')
  }
  if (!query.code) throw new OAuthLoginError('invalid_request', 'The login provider answered without a code', 'provider')
  if (!cookies.verifier || (provider.openid && !cookies.nonce)) {
    throw new OAuthLoginError('invalid_state', 'The login session is incomplete: start the login again', 'state')
  }

  const as = await metadataOf(ctx, provider, finish.origin, finish.fetchFn, 'exchange')
  const client: oauth.Client = { client_id: provider.clientId }
  let params: URLSearchParams
  try {
    params = oauth.validateAuthResponse(as, client, finish.requestUrl.searchParams, state)
  }
  catch (cause) {
    throw new OAuthLoginError('invalid_request', 'The answer of the login provider is not valid', 'provider', cause)
  }

  const { tokens, idClaims } = await exchangeCode({ provider, as, client, params, redirectUri: record.redirectUri, verifier: cookies.verifier, nonce: cookies.nonce, fetchFn: finish.fetchFn })
  const { user, providerClaims } = await fetchUser(provider, { as, client, tokens, idClaims, fetchFn: finish.fetchFn })
  if (record.link) return finishLink(ctx, record.link, { event, provider: provider.name, user })

  const handlers: ProviderLoginHandlers = {
    customClaims: composeClaims(providerClaims, finish.handlers.customClaims),
    onUserInfo: finish.handlers.onUserInfo,
    onSuccess: finish.handlers.onSuccess,
  }
  try {
    const { location, code } = await completeLogin(ctx, { event, provider: provider.name, user, tokens, handlers, redirect: record.redirect, upstream: upstreamLoginOf(provider, tokens, idClaims), codeChallenge: record.native?.codeChallenge })
    // A second factor's detour stays in the browser.
    return record.native && code ? nativeLocation(record.native, { code }) : location
  }
  catch (cause) {
    const deliberate = isError(cause) && !cause.unhandled && cause.statusCode >= 400 && cause.statusCode < 500
    throw new OAuthLoginError('login_failed', deliberate ? sanitizeErrorText(cause.message) || 'The login was refused' : 'The login could not be completed', 'login', cause)
  }
}

/** A link's end: the feature that links identities says where the browser goes (it answers its own refusals). */
async function finishLink(ctx: AuthContext, link: IdentityLinkRequest, login: Parameters<NonNullable<AuthFeature['finishLink']>>[2]): Promise<string> {
  const linker = ctx.features.find(feature => feature.finishLink)
  if (!linker) throw new OAuthLoginError('server_error', 'Linking accounts is not configured', 'login')
  return linker.finishLink!(ctx, link, login)
}

/** The OpenID Connect login to keep with the session (for a logout at the provider and its back-channel logout). */
function upstreamLoginOf(provider: ResolvedProvider, tokens: ProviderTokens, idClaims: oauth.IDToken | undefined): UpstreamLogin | undefined {
  if (!provider.openid || !idClaims || !tokens.id_token) return undefined
  const sid = typeof idClaims.sid === 'string' && idClaims.sid ? idClaims.sid : undefined
  return { provider: provider.name, sub: idClaims.sub, idToken: tokens.id_token, ...(sid ? { sid } : {}) }
}

/**
 * Ends the login this browser started when `state` is its own: its login cookies are deleted whatever the
 * outcome. Another state (an older login, someone else's link) leaves them, not to end another tab's login.
 */
function endStartedLogin(event: H3Event, ctx: AuthContext, state: unknown, cookies = readLoginCookies(event, ctx)): boolean {
  if (typeof state !== 'string' || !state || !cookies.state || !safeEqual(state, cookies.state)) return false
  clearLoginCookies(event, ctx)
  return true
}

/** Provider claims (the mock user's extra keys) with the host route's static or callback claims over them. */
function composeClaims(base: Record<string, unknown> | undefined, host: OAuthEventHandlerOptions<unknown>['customClaims']): ProviderLoginHandlers['customClaims'] {
  if (!base) return host
  return async (user, tokens) => {
    const extra = typeof host === 'function' ? await host(user, tokens) : host
    return { ...base, ...(extra ?? {}) }
  }
}
