import type { H3Event } from 'h3'
import { getQuery, getRequestURL, isError, sendRedirect } from 'h3'
import * as oauth from 'oauth4webapi'
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose'
import { z } from 'zod'
import type { AuthUser, ProviderTokens } from '../../../types/auth'
import type { OAuthErrorPayload, OAuthEventHandlerOptions } from '../../../types/oauth'
import type { AuthContext } from '../context'
import { safeEqual } from '../crypto'
import { originOf } from '../origin'
import { authError } from '../errors'
import { completeLogin, type ProviderLoginHandlers } from '../login'
import { clearLoginCookies, LOGIN_TTL, readLoginCookies, setLoginCookies } from './cookies'
import { authorizationServerOf, guardedFetch, httpOptions, jwksCacheOf, type ProviderFetch } from './http'
import { isMockEnabled } from './mock'
import {
  mapGitHubProfile,
  mapMockProfile,
  mapOidcProfile,
  mockUserClaims,
  providerOptionsOf,
  resolveProvider,
  type GitHubEmail,
  type ResolvedProvider,
} from './providers'
import { isErrorCode, isSafeRedirect, sanitizeErrorText, withQueryParams } from './redirect'

const stateRecord = z.object({
  provider: z.string(),
  redirectUri: z.string(),
  redirect: z.string().optional(),
  createdAt: z.number(),
})

/** What a started login keeps server side (single use, keyed by its `state`). */
type StateRecord = z.output<typeof stateRecord>

const STATE_NS = 'oauth-state'

/**
 * Origin of the mock provider's endpoints when no public URL is configured: the server reaches
 * them in process (only the path is used), and the browser is sent to relative URLs.
 */
const IN_PROCESS_ORIGIN = 'http://in-process.invalid'

export interface OAuthRequestOptions {
  /** Provider name. */
  name: string
  /** Handlers (and a `config` override) of a host route. */
  handlers?: OAuthEventHandlerOptions<object>
  /** Fetch for requests to real providers (default: global fetch, guarded). */
  fetch?: ProviderFetch
  /** Fetch for the mock provider's endpoints on the app itself (in Nitro: an in-process call). */
  mockFetch?: ProviderFetch
}

/** A failed step of a login, with the code and text sent to the error page. */
export class OAuthLoginError extends Error {
  constructor(
    readonly code: string,
    readonly description: string,
    readonly stage: OAuthErrorPayload['stage'],
    readonly reason?: unknown,
  ) {
    super(description)
  }
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
  user: text(320),
  mock_error: text(64),
})

type LoginQuery = z.output<typeof querySchema>

/**
 * GET <loginPath>/<provider>: without `code`, `state` or `error` it starts a login (302 to the
 * provider); otherwise it finishes one (302 to `<callbackPath>?code=…`, or to `redirect.error`
 * with `error` and `error_description` when anything fails).
 */
export async function handleOAuthRequest(event: H3Event, ctx: AuthContext, options: OAuthRequestOptions): Promise<void> {
  const { name, handlers = {} } = options
  const provider = providerFor(ctx, name, handlers.config)
  const fetchFn = provider.type === 'mock' && options.mockFetch ? options.mockFetch : guardedFetch(options.fetch)
  const requestUrl = getRequestURL(event)
  const rawQuery = getQuery(event)
  const isCallback = ['code', 'state', 'error'].some(key => Object.hasOwn(rawQuery, key))
  try {
    const publicOrigin = ctx.options.publicUrl ? originOf(ctx.options.publicUrl) : undefined
    // The mock provider never builds a URL from the request's Host header: without a public URL
    // its browser-facing URLs are relative paths and its endpoints are called in process.
    const relative = provider.type === 'mock' && !publicOrigin
    const origin = publicOrigin ?? (relative ? IN_PROCESS_ORIGIN : requestUrl.origin)
    const redirectUri = provider.redirectUrl ?? (relative ? requestUrl.pathname : `${origin}${requestUrl.pathname}`)
    const cookiePath = new URL(redirectUri, origin).pathname
    const parsed = querySchema.safeParse(rawQuery)
    if (!parsed.success) {
      if (isCallback) clearLoginCookies(event, ctx, cookiePath)
      throw new OAuthLoginError('invalid_request', 'The login request is malformed', isCallback ? 'provider' : 'start')
    }
    if (!isCallback) {
      const location = await startLogin(event, ctx, provider, parsed.data, { redirectUri, cookiePath, origin, relative, fetchFn })
      return await sendRedirect(event, location, 302)
    }
    const code = await finishLogin(event, ctx, provider, parsed.data, { requestUrl, cookiePath, origin, fetchFn, handlers })
    return await sendRedirect(event, withQueryParams(ctx.options.endpoints.callbackPath, { code }), 302)
  }
  catch (error) {
    // Anything unexpected (storage down, a bug) still ends on the error page, never a 500.
    const failure = error instanceof OAuthLoginError
      ? error
      : new OAuthLoginError('server_error', 'The login could not be completed', isCallback ? 'login' : 'start', error)
    return await sendLoginError(event, ctx, provider.name, handlers, failure)
  }
}

/** The resolved provider of a name, with a host route's `config` over the module options; 404 if absent. */
function providerFor(ctx: AuthContext, name: string, override: object | undefined): ResolvedProvider {
  const found = providerOptionsOf(ctx.options.providers, name)
  if (!found && !override) throw authError(404, 'not_found', `Unknown login provider "${name}"`)
  const type = found?.type ?? 'custom'
  if (type === 'mock' && !isMockEnabled(ctx.options, ctx.dev)) throw authError(404, 'not_found', 'Not found')
  return resolveProvider(name, type, { ...found?.options, ...override })
}

interface StartContext {
  redirectUri: string
  cookiePath: string
  origin: string
  /** Send the browser to a relative URL (the mock provider without a public URL). */
  relative: boolean
  fetchFn: ProviderFetch
}

async function startLogin(event: H3Event, ctx: AuthContext, provider: ResolvedProvider, query: LoginQuery, start: StartContext): Promise<string> {
  if (!provider.clientId || !provider.clientSecret) {
    ctx.logger.error(`Provider ${provider.name}: clientId and clientSecret are required`)
    throw new OAuthLoginError('server_error', 'This login provider is not configured', 'start')
  }
  let redirect: string | undefined
  if (query.redirect !== undefined) {
    if (isSafeRedirect(query.redirect)) redirect = query.redirect
    else ctx.logger.security('oauth_redirect_refused', { provider: provider.name, ip: event.node.req.socket?.remoteAddress })
  }
  const as = await metadataOf(ctx, provider, start.origin, start.fetchFn, 'start')

  const state = oauth.generateRandomState()
  const verifier = oauth.generateRandomCodeVerifier()
  const nonce = provider.openid ? oauth.generateRandomNonce() : undefined
  const record: StateRecord = { provider: provider.name, redirectUri: start.redirectUri, redirect, createdAt: Date.now() }
  await ctx.store.write(ctx.store.key(STATE_NS, state), record, LOGIN_TTL)
  setLoginCookies(event, ctx, start.cookiePath, { state, verifier, nonce })

  const url = new URL(as.authorization_endpoint!)
  const params: Record<string, string> = { ...provider.authorizationParams }
  if (provider.type === 'mock') {
    if (query.user) params.login_hint = query.user
    if (query.mock_error) params.mock_error = query.mock_error
  }
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
  cookiePath: string
  origin: string
  fetchFn: ProviderFetch
  handlers: OAuthEventHandlerOptions<object>
}

const PROVIDER_ERROR_TEXT: Record<string, string> = {
  access_denied: 'The login was cancelled or refused at the provider',
}

async function finishLogin(event: H3Event, ctx: AuthContext, provider: ResolvedProvider, query: LoginQuery, finish: FinishContext): Promise<string> {
  const cookies = readLoginCookies(event)
  clearLoginCookies(event, ctx, finish.cookiePath)

  // The state must be the one this browser was given, and unused.
  if (!query.state || !cookies.state || !safeEqual(query.state, cookies.state)) {
    throw new OAuthLoginError('invalid_state', 'The login session is missing or does not match: start the login again', 'state')
  }
  const record = await ctx.store.take(ctx.store.key(STATE_NS, query.state), stateRecord)
  if (!record || record.provider !== provider.name) {
    throw new OAuthLoginError('invalid_state', 'The login session has expired or was already used: start the login again', 'state')
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
    params = oauth.validateAuthResponse(as, client, finish.requestUrl.searchParams, query.state)
  }
  catch (cause) {
    throw new OAuthLoginError('invalid_request', 'The answer of the login provider is not valid', 'provider', cause)
  }

  const { tokens, idClaims } = await exchangeCode(provider, as, client, params, record.redirectUri, cookies, finish.fetchFn)
  const { user, providerClaims } = await fetchUser(provider, as, client, tokens, idClaims, finish.fetchFn)

  const handlers: ProviderLoginHandlers = {
    customClaims: composeClaims(providerClaims, finish.handlers.customClaims),
    onUserInfo: finish.handlers.onUserInfo,
    onSuccess: finish.handlers.onSuccess,
  }
  try {
    const { code } = await completeLogin(ctx, { event, provider: provider.name, user, tokens, handlers, redirect: record.redirect })
    return code
  }
  catch (cause) {
    const deliberate = isError(cause) && !cause.unhandled && cause.statusCode >= 400 && cause.statusCode < 500
    throw new OAuthLoginError('login_failed', deliberate ? sanitizeErrorText(cause.message) || 'The login was refused' : 'The login could not be completed', 'login', cause)
  }
}

/** Provider claims (the mock user's extra keys) with the host route's static or callback claims over them. */
function composeClaims(base: Record<string, unknown> | undefined, host: OAuthEventHandlerOptions<unknown>['customClaims']): ProviderLoginHandlers['customClaims'] {
  if (!base) return host
  return async (user, tokens) => {
    const extra = typeof host === 'function' ? await host(user, tokens) : host
    return { ...base, ...(extra ?? {}) }
  }
}

async function exchangeCode(provider: ResolvedProvider, as: oauth.AuthorizationServer, client: oauth.Client, params: URLSearchParams, redirectUri: string, cookies: { verifier?: string, nonce?: string }, fetchFn: ProviderFetch): Promise<{ tokens: ProviderTokens, idClaims?: oauth.IDToken }> {
  const auth = provider.tokenEndpointAuthMethod === 'client_secret_post' ? oauth.ClientSecretPost(provider.clientSecret) : oauth.ClientSecretBasic(provider.clientSecret)
  let response: Response
  try {
    response = await oauth.authorizationCodeGrantRequest(as, client, auth, params, redirectUri, cookies.verifier!, httpOptions(fetchFn))
  }
  catch (cause) {
    throw new OAuthLoginError('token_exchange_failed', 'The login provider could not be reached to exchange the code', 'exchange', cause)
  }
  const server = provider.multiTenantIssuer ? await withTenantIssuer(as, response) : as
  let result: oauth.TokenEndpointResponse
  try {
    result = await oauth.processAuthorizationCodeResponse(server, client, response, provider.openid ? { expectedNonce: cookies.nonce, requireIdToken: true } : undefined)
  }
  catch (cause) {
    if (isIdTokenFailure(cause)) throw new OAuthLoginError('invalid_id_token', 'The identity token of the login provider is not valid', 'id_token', cause)
    throw new OAuthLoginError('token_exchange_failed', 'The login provider refused the authorization code', 'exchange', cause)
  }
  let idClaims: oauth.IDToken | undefined
  if (result.id_token) {
    try {
      await verifyIdTokenSignature(server, response, result.id_token, provider, fetchFn)
    }
    catch (cause) {
      throw new OAuthLoginError('invalid_id_token', 'The identity token of the login provider is not valid', 'id_token', cause)
    }
    idClaims = oauth.getValidatedIdTokenClaims(result)
  }
  const tokens: ProviderTokens = { access_token: result.access_token }
  if (result.refresh_token) tokens.refresh_token = result.refresh_token
  if (result.id_token) tokens.id_token = result.id_token
  if (typeof result.expires_in === 'number') tokens.expires_in = result.expires_in
  return { tokens, idClaims }
}

function isIdTokenFailure(error: unknown): boolean {
  return error instanceof Error && !(error instanceof oauth.ResponseBodyError) && /JWT|ID Token|id_token/.test(error.message)
}

const TENANT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Entra ID multi-tenant endpoints (`common`, `organizations`, `consumers`) issue id_tokens whose
 * issuer names the user's own tenant. The expected issuer is the template with the token's `tid`
 * (a tenant GUID); the id_token is then checked against it as usual, signature included.
 */
async function withTenantIssuer(as: oauth.AuthorizationServer, response: Response): Promise<oauth.AuthorizationServer> {
  try {
    const body = await response.clone().json() as { id_token?: unknown }
    const tid = typeof body.id_token === 'string' ? decodeJwt(body.id_token).tid : undefined
    if (typeof tid === 'string' && TENANT_ID.test(tid)) return { ...as, issuer: as.issuer.replace('{tenantid}', tid) }
  }
  catch {
    // The normal processing reports the malformed answer.
  }
  return as
}

/**
 * Signature of the id_token: public keys from the provider's JWKS (cached per process), or the
 * client secret for HS256 tokens (Auth0 applications may be set up that way).
 */
async function verifyIdTokenSignature(as: oauth.AuthorizationServer, response: Response, idToken: string, provider: ResolvedProvider, fetchFn: ProviderFetch): Promise<void> {
  const { alg } = decodeProtectedHeader(idToken)
  if (alg === 'HS256' || alg === 'HS384' || alg === 'HS512') {
    await jwtVerify(idToken, new TextEncoder().encode(provider.clientSecret), { algorithms: [alg] })
    return
  }
  if (!as.jwks_uri) throw new Error('The provider publishes no jwks_uri to verify id_token signatures')
  await oauth.validateApplicationLevelSignature(as, response, { ...httpOptions(fetchFn), [oauth.jwksCache]: jwksCacheOf(as.jwks_uri) })
}

interface FetchedUser {
  user: AuthUser
  /** Claims the provider itself contributes (the mock user's extra keys). */
  providerClaims?: Record<string, unknown>
}

async function fetchUser(provider: ResolvedProvider, as: oauth.AuthorizationServer, client: oauth.Client, tokens: ProviderTokens, idClaims: oauth.IDToken | undefined, fetchFn: ProviderFetch): Promise<FetchedUser> {
  let fetched: FetchedUser
  try {
    if (provider.profile === 'github') {
      fetched = { user: await fetchGitHubUser(provider, tokens.access_token, fetchFn) }
    }
    else if (provider.profile === 'mock') {
      const info = await fetchUserInfo(as, client, tokens.access_token, oauth.skipSubjectCheck, fetchFn)
      fetched = { user: mapMockProfile(info), providerClaims: mockUserClaims(info) }
    }
    else {
      const info = as.userinfo_endpoint ? await fetchUserInfo(as, client, tokens.access_token, idClaims?.sub ?? oauth.skipSubjectCheck, fetchFn) : {}
      // Claims of the validated id_token win over the userinfo answer.
      fetched = { user: mapOidcProfile({ ...info, ...(idClaims ?? {}) }) }
    }
  }
  catch (cause) {
    throw new OAuthLoginError('userinfo_failed', 'The profile could not be read from the login provider', 'userinfo', cause)
  }
  if (!fetched.user.sub) throw new OAuthLoginError('userinfo_failed', 'The login provider returned no user id', 'userinfo')
  return fetched
}

async function fetchUserInfo(as: oauth.AuthorizationServer, client: oauth.Client, accessToken: string, expectedSubject: string | typeof oauth.skipSubjectCheck, fetchFn: ProviderFetch): Promise<Record<string, unknown>> {
  const response = await oauth.userInfoRequest(as, client, accessToken, httpOptions(fetchFn))
  return { ...await oauth.processUserInfoResponse(as, client, expectedSubject, response) }
}

async function fetchGitHubUser(provider: ResolvedProvider, accessToken: string, fetchFn: ProviderFetch): Promise<AuthUser> {
  const get = async (path: string) => {
    const headers = new Headers({ accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' })
    const response = await oauth.protectedResourceRequest(accessToken, 'GET', new URL(`${provider.apiUrl}${path}`), headers, null, httpOptions(fetchFn))
    if (response.status !== 200) throw new Error(`GitHub ${path} answered ${response.status}`)
    return response.json() as Promise<unknown>
  }
  const profile = await get('/user')
  if (!profile || typeof profile !== 'object') throw new Error('GitHub /user answered no profile')
  // The email list needs the user:email scope; without it the profile's public email is kept, unverified.
  const emails = await get('/user/emails').catch(() => undefined)
  return mapGitHubProfile(profile as Record<string, unknown>, Array.isArray(emails) ? emails as GitHubEmail[] : undefined)
}

/**
 * Ends a failed login: onError of the host route (a failing onError is logged), then 302 to
 * `redirect.error` with `error` and `error_description`, unless onError answered itself.
 */
async function sendLoginError(event: H3Event, ctx: AuthContext, provider: string, handlers: OAuthEventHandlerOptions<unknown>, failure: OAuthLoginError): Promise<void> {
  ctx.logger.security('oauth_login_failed', { provider, error: failure.code, stage: failure.stage, ip: event.node.req.socket?.remoteAddress })
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
  await sendRedirect(event, withQueryParams(ctx.options.redirect.error, { error: failure.code, error_description: failure.description }), 302)
}

/** A short server-side description of a failure (no response bodies or tokens). */
function describeCause(cause: unknown): string {
  if (cause instanceof oauth.ResponseBodyError) return `${cause.error}${cause.error_description ? `: ${cause.error_description}` : ''} (HTTP ${cause.status})`
  if (cause instanceof Error) return cause.message
  return String(cause)
}

