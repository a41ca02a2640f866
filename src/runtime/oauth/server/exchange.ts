import * as oauth from 'oauth4webapi'
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose'
import type { ProviderTokens } from '../../types/auth'
import type { OAuthErrorPayload } from '../oauth-types'
import { asSubject } from '../../server/lib/core/subject'
import { httpOptions, jwksCacheOf } from './provider-http'
import type { FetchedUser, ProviderFetch, ResolvedProvider } from './preset'

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

export interface ExchangeInput {
  provider: ResolvedProvider
  as: oauth.AuthorizationServer
  client: oauth.Client
  params: URLSearchParams
  redirectUri: string
  verifier: string
  nonce?: string
  fetchFn: ProviderFetch
}

/**
 * Exchanges the code (PKCE, client authentication); for OpenID Connect requires and validates the
 * id_token (claims and nonce by oauth4webapi, signature by the JWKS or the client secret for HS*).
 */
export async function exchangeCode({ provider, as, client, params, redirectUri, verifier, nonce, fetchFn }: ExchangeInput): Promise<{ tokens: ProviderTokens, idClaims?: oauth.IDToken }> {
  const auth = provider.tokenEndpointAuthMethod === 'client_secret_post' ? oauth.ClientSecretPost(provider.clientSecret) : oauth.ClientSecretBasic(provider.clientSecret)
  let response: Response
  try {
    response = await oauth.authorizationCodeGrantRequest(as, client, auth, params, redirectUri, verifier, httpOptions(fetchFn))
  }
  catch (cause) {
    throw new OAuthLoginError('token_exchange_failed', 'The login provider could not be reached to exchange the code', 'exchange', cause)
  }
  const server = provider.multiTenantIssuer ? await withTenantIssuer(as, response) : as
  let result: oauth.TokenEndpointResponse
  try {
    result = await oauth.processAuthorizationCodeResponse(server, client, response, provider.openid ? { expectedNonce: nonce, requireIdToken: true } : undefined)
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
  if (typeof result.scope === 'string') tokens.scope = result.scope
  return { tokens, idClaims }
}

function isIdTokenFailure(error: unknown): boolean {
  return error instanceof Error && !(error instanceof oauth.ResponseBodyError) && /JWT|ID Token|id_token/.test(error.message)
}

const TENANT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Entra ID multi-tenant endpoints issue id_tokens whose issuer names the user's tenant: the expected
 * issuer is the template with the token's `tid`, then checked as usual, signature included.
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

/** Signature of the id_token: the provider's JWKS (cached), or the client secret for HS256 (Auth0 allows it). */
async function verifyIdTokenSignature(as: oauth.AuthorizationServer, response: Response, idToken: string, provider: ResolvedProvider, fetchFn: ProviderFetch): Promise<void> {
  const { alg } = decodeProtectedHeader(idToken)
  if (alg === 'HS256' || alg === 'HS384' || alg === 'HS512') {
    await jwtVerify(idToken, new TextEncoder().encode(provider.clientSecret), { algorithms: [alg] })
    return
  }
  if (!as.jwks_uri) throw new Error('The provider publishes no jwks_uri to verify id_token signatures')
  await oauth.validateApplicationLevelSignature(as, response, { ...httpOptions(fetchFn), [oauth.jwksCache]: jwksCacheOf(as.jwks_uri) })
}

/** The user of the login through the provider's own way of reading it; it must have a subject. */
export async function fetchUser(provider: ResolvedProvider, request: Omit<Parameters<ResolvedProvider['fetchProfile']>[0], 'provider'>): Promise<FetchedUser> {
  let fetched: FetchedUser
  try {
    fetched = await provider.fetchProfile({ ...request, provider })
  }
  catch (cause) {
    throw new OAuthLoginError('userinfo_failed', 'The profile could not be read from the login provider', 'userinfo', cause)
  }
  if (!asSubject(fetched.user.sub)) throw new OAuthLoginError('userinfo_failed', 'The login provider returned no user id', 'userinfo')
  return fetched
}
