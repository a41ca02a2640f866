import type { H3Event } from 'h3'
import { getQuery, getRequestURL, isError, sendRedirect } from 'h3'
import * as oauth from 'oauth4webapi'
import { z } from 'zod'
import type { ProviderLoginHandlers, ProviderTokens } from '../../types/auth'
import type { UpstreamLogin } from '../../server/lib/core/records/record-schema'
import type { OAuthErrorPayload, OAuthEventHandlerOptions } from '../oauth-types'
import { browserBindingOf, matchesCodeBinding } from '../../server/lib/core/code-binding'
import type { AuthContext } from '../../server/lib/core/context'
import { safeEqual } from '../../server/lib/store/crypto'
import { originOf } from '../../server/lib/edge/origin'
import { refusalWindow, requestRefused, securityEvent } from '../../server/lib/edge/security-event'
import { completeLogin } from '../../server/lib/core/login'
import { saveOAuthState, takeOAuthState, type NativeReturn } from './oauth-state'
import { clearLoginCookies, LOGIN_TTL, readLoginCookies, setLoginCookies } from './oauth-cookies'
import { exchangeCode, fetchUser, OAuthLoginError } from './exchange'
import { authorizationServerOf, guardedFetch } from './provider-http'
import type { ProviderFetch, ResolvedProvider } from './preset'
import { providerOf } from './provider-registry'
import { isErrorCode, isSafeRedirect, sanitizeErrorText, withQueryParams } from '../../server/lib/edge/redirect'
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
  const fetchFn = provider.local && options.localFetch ? options.localFetch : guardedFetch(options.fetch)
  const requestUrl = getRequestURL(event)
  const rawQuery = getQuery(event)
  const isCallback = !options.native && ['code', 'state', 'error'].some(key => Object.hasOwn(rawQuery, key))
  // Where the login continues once it is known to be a native app's (its state record taken), for its errors too.
  const flow: { native?: NativeReturn } = { native: options.native }
  try {
    const publicOrigin = ctx.options.publicUrl ? originOf(ctx.options.publicUrl) : undefined
    // The mock never builds a URL from the Host header: without a public URL it uses relative paths and in-process calls.
    const relative = provider.local && !publicOrigin
    const origin = publicOrigin ?? (relative ? IN_PROCESS_ORIGIN : requestUrl.origin)
    // A native login starts elsewhere; the provider returns to the provider's login route all the same.
    const callbackPath = options.native ? underPath(ctx.options.endpoints.loginPath, provider.name) : requestUrl.pathname
    const redirectUri = provider.redirectUrl ?? (relative ? callbackPath : `${origin}${callbackPath}`)
    const parsed = querySchema.safeParse(rawQuery)
    if (!parsed.success) {
      if (isCallback) endStartedLogin(event, ctx, rawQuery.state)
      throw new OAuthLoginError('invalid_request', 'The login request is malformed', isCallback ? 'provider' : 'start')
    }
    if (!isCallback) {
      const location = await startLogin(event, ctx, provider, parsed.data, { redirectUri, origin, relative, fetchFn, forwarded: forwardedParams(provider, rawQuery), native: options.native })
      return await sendRedirect(event, location, 302)
    }
    const location = await finishLogin(event, ctx, provider, parsed.data, { requestUrl, origin, fetchFn, handlers, flow })
    return await sendRedirect(event, location, 302)
  }
  catch (error) {
    // Anything unexpected (storage down, a bug) still ends on the error page, never a 500.
    const failure = error instanceof OAuthLoginError
      ? error
      : new OAuthLoginError('server_error', 'The login could not be completed', isCallback ? 'login' : 'start', error)
    return await sendLoginError(event, ctx, provider.name, handlers, failure, flow.native)
  }
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
}

async function startLogin(event: H3Event, ctx: AuthContext, provider: ResolvedProvider, query: LoginQuery, start: StartContext): Promise<string> {
  if (!provider.clientId || !provider.clientSecret) {
    ctx.logger.error(`Provider ${provider.name}: clientId and clientSecret are required`)
    throw new OAuthLoginError('server_error', 'This login provider is not configured', 'start')
  }
  let redirect: string | undefined
  if (query.redirect !== undefined && !start.native) {
    if (isSafeRedirect(query.redirect)) redirect = query.redirect
    else await requestRefused(ctx, event, 'redirect', { details: { provider: provider.name } })
  }
  const as = await metadataOf(ctx, provider, start.origin, start.fetchFn, 'start')

  const state = oauth.generateRandomState()
  const verifier = oauth.generateRandomCodeVerifier()
  const nonce = provider.openid ? oauth.generateRandomNonce() : undefined
  // The state is bound to this browser, so a state planted in another (cookie tossing) is refused.
  await saveOAuthState(ctx, state, { provider: provider.name, redirectUri: start.redirectUri, redirect, binding: browserBindingOf(event, ctx, LOGIN_TTL), ...(start.native ? { native: start.native } : {}) }, LOGIN_TTL)
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
  /** Set to the native app of the login once its state record is taken. */
  flow: { native?: NativeReturn }
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
  finish.flow.native = record.native
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

/** The native app's redirect URI with `params` and the app's `state` added to its query. */
export function nativeLocation(app: Pick<NativeReturn, 'redirectUri' | 'state'>, params: Record<string, string>): string {
  const url = new URL(app.redirectUri)
  for (const [key, value] of Object.entries({ ...params, ...(app.state === undefined ? {} : { state: app.state }) })) url.searchParams.set(key, value)
  return url.href
}

/**
 * Ends a failed login: the host's onError (a failure is logged), then 302 to `redirect.error` (a native app's
 * login: to its redirect URI) unless onError answered.
 */
async function sendLoginError(event: H3Event, ctx: AuthContext, provider: string, handlers: OAuthEventHandlerOptions<unknown>, failure: OAuthLoginError, native?: NativeReturn): Promise<void> {
  // Anyone can call a callback with a made-up state: one event per provider, reason and client each 5 minutes.
  await securityEvent(ctx, event, { type: 'login', outcome: 'failure', actor: null, details: { provider, reason: failure.code, stage: failure.stage }, aggregate: refusalWindow(ctx, event, `${provider}\0${failure.code}`) })
  if (failure.code === 'server_error') ctx.logger.error(`Login with ${provider} failed unexpectedly`, failure.reason)
  else if (failure.reason !== undefined) ctx.logger.warn(`Login with ${provider} failed (${failure.code})`, describeCause(failure.reason))
  if (handlers.onError) {
    try {
      await handlers.onError({ provider, error: failure.code, errorDescription: failure.description, stage: failure.stage, cause: failure.reason, event })
    }
    catch (error) {
      ctx.logger.error(`onError of ${provider} failed`, error)
    }
  }
  if (event.handled) return
  const params = { error: failure.code, error_description: failure.description }
  await sendRedirect(event, native ? nativeLocation(native, params) : withQueryParams(ctx.options.redirect.error, params), 302)
}

/** A short server-side description of a failure (no response bodies or tokens). */
function describeCause(cause: unknown): string {
  if (cause instanceof oauth.ResponseBodyError) return `${cause.error}${cause.error_description ? `: ${cause.error_description}` : ''} (HTTP ${cause.status})`
  if (cause instanceof Error) return cause.message
  return String(cause)
}
