import type { H3Event } from 'h3'
import { getQuery, getRequestHeader, readBody, sendRedirect } from 'h3'
import type { z } from 'zod'
import type { MockProviderOptions, MockUser } from '../../types/providers'
import type { AuthContext } from '../../server/lib/core/context'
import { randomToken, s256, safeEqual } from '../../server/lib/store/crypto'
import { authError } from '../../server/lib/edge/errors'
import { originOf } from '../../server/lib/edge/origin'
import { readMockToken, saveMockCode, saveMockToken, takeMockCode, MOCK_TOKEN_TTL } from './mock-records'
import { parseBearer } from '../../server/lib/edge/route-rules'
import { mockAuthorizeRequest as authorizeSchema, mockTokenRequest as tokenSchema } from '../../server/lib/edge/request-schemas'
import { isMockEnabled, MOCK_DEFAULTS } from './mock-preset'
import { isErrorCode, isSafeRedirect, withQueryParams } from '../../server/lib/edge/redirect'

/** The mock provider options with their defaults; 404 when it is off. */
function mockOptions(ctx: AuthContext): Required<MockProviderOptions> {
  if (!isMockEnabled(ctx.options, ctx.dev)) throw authError('not_found')
  const mock = ctx.options.providers.mock!
  return {
    clientId: mock.clientId || MOCK_DEFAULTS.clientId,
    clientSecret: mock.clientSecret || MOCK_DEFAULTS.clientSecret,
    mockUsers: Array.isArray(mock.mockUsers) ? mock.mockUsers : [],
    defaultUser: mock.defaultUser ?? MOCK_DEFAULTS.defaultUser,
    enableInProduction: mock.enableInProduction === true,
  }
}

/** The mock user chosen by `hint`: none → `defaultUser`, digits → that index, else by `sub`, else by email. */
export function findMockUser(users: MockUser[], hint: string | undefined, defaultUser = 0): MockUser | undefined {
  if (hint === undefined || hint === '') return users[defaultUser]
  if (/^\d{1,6}$/.test(hint) && Number(hint) < users.length) return users[Number(hint)]
  return users.find(u => u.sub === hint) ?? users.find(u => typeof u.email === 'string' && u.email.toLowerCase() === hint.toLowerCase())
}

/** A redirect URI the mock may send the browser to: a path of this app or a URL on the public URL (never from the Host header). */
function isOwnRedirectUri(ctx: AuthContext, value: string): boolean {
  if (value.startsWith('/')) return isSafeRedirect(value)
  const publicOrigin = ctx.options.publicUrl ? originOf(ctx.options.publicUrl) : undefined
  return publicOrigin !== undefined && originOf(value) === publicOrigin
}

/**
 * GET /mock/authorize: checks the client and redirect URI, requires PKCE S256, picks the user by
 * `login_hint` and redirects back with a 60-second code, or with `error`.
 */
export async function mockAuthorize(event: H3Event, ctx: AuthContext): Promise<void> {
  const mock = mockOptions(ctx)
  const parsed = authorizeSchema.safeParse(getQuery(event))
  if (!parsed.success) throw authError('invalid_request', 'client_id and redirect_uri are required')
  const q = parsed.data
  if (!safeEqual(q.client_id, mock.clientId)) throw authError('invalid_request', 'Unknown client_id')
  if (!isOwnRedirectUri(ctx, q.redirect_uri)) {
    throw authError('invalid_request', 'redirect_uri must be a path of this app (or a URL on svcAuth.publicUrl)')
  }
  const back = (params: Record<string, string>) => {
    const all = q.state ? { ...params, state: q.state } : params
    if (q.redirect_uri.startsWith('/')) return sendRedirect(event, withQueryParams(q.redirect_uri, all), 302)
    const target = new URL(q.redirect_uri)
    for (const [key, value] of Object.entries(all)) target.searchParams.set(key, value)
    return sendRedirect(event, target.href, 302)
  }
  if (q.response_type !== 'code') return back({ error: 'unsupported_response_type', error_description: 'Only response_type=code is supported' })
  if (q.mock_error !== undefined) {
    return back({ error: isErrorCode(q.mock_error) ? q.mock_error : 'access_denied', error_description: 'Simulated provider error' })
  }
  if (!q.code_challenge || q.code_challenge_method !== 'S256') return back({ error: 'invalid_request', error_description: 'PKCE with S256 is required' })
  const user = findMockUser(mock.mockUsers, q.login_hint, mock.defaultUser)
  if (!user) return back({ error: 'invalid_request', error_description: 'Unknown mock user' })

  const code = randomToken(32)
  await saveMockCode(ctx, code, { clientId: q.client_id, redirectUri: q.redirect_uri, codeChallenge: q.code_challenge, scope: q.scope ?? '', sub: user.sub })
  return back({ code })
}

/** Client credentials of a token request: HTTP Basic (RFC 6749 2.3.1) or the form body. */
function clientCredentials(event: H3Event, body: z.output<typeof tokenSchema>): { id?: string, secret?: string } {
  const header = getRequestHeader(event, 'authorization')
  const basic = header && /^Basic\s+([A-Z0-9+/=]+)\s*$/i.exec(header)
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon < 0) return {}
    try {
      const form = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '))
      return { id: form(decoded.slice(0, colon)), secret: form(decoded.slice(colon + 1)) }
    }
    catch {
      return {}
    }
  }
  return { id: body.client_id, secret: body.client_secret }
}

/**
 * POST /mock/token: takes the code once, checks client (Basic or body), redirect URI and PKCE, answers
 * `{ access_token, token_type: 'Bearer', expires_in, scope }`.
 */
export async function mockToken(event: H3Event, ctx: AuthContext): Promise<Record<string, unknown>> {
  const mock = mockOptions(ctx)
  const contentType = getRequestHeader(event, 'content-type') ?? ''
  if (!contentType.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
    throw authError('invalid_request', 'The body must be application/x-www-form-urlencoded')
  }
  let raw: unknown
  try {
    raw = await readBody(event)
  }
  catch {
    throw authError('invalid_request', 'The body could not be read')
  }
  const parsed = tokenSchema.safeParse(raw ?? {})
  if (!parsed.success) throw authError('invalid_request', 'grant_type, code, redirect_uri and code_verifier are required')
  const body = parsed.data
  const client = clientCredentials(event, body)
  if (!client.id || !client.secret || !safeEqual(client.id, mock.clientId) || !safeEqual(client.secret, mock.clientSecret)) {
    throw authError('invalid_client', undefined, { 'www-authenticate': 'Basic realm="mock"' })
  }
  if (body.grant_type !== 'authorization_code') throw authError('unsupported_grant_type')
  const record = await takeMockCode(ctx, body.code)
  if (!record || record.clientId !== client.id || record.redirectUri !== body.redirect_uri) {
    throw authError('invalid_grant')
  }
  if (!safeEqual(s256(body.code_verifier), record.codeChallenge)) throw authError('invalid_grant', 'PKCE verification failed')

  const accessToken = randomToken(32)
  await saveMockToken(ctx, accessToken, { sub: record.sub })
  return { access_token: accessToken, token_type: 'Bearer', expires_in: MOCK_TOKEN_TTL, scope: record.scope }
}

/** GET /mock/userinfo (Authorization: Bearer <mock access token>): the mock user, all its keys. */
export async function mockUserinfo(event: H3Event, ctx: AuthContext): Promise<MockUser> {
  const mock = mockOptions(ctx)
  const invalid = () => authError('invalid_token', undefined, { 'www-authenticate': 'Bearer error="invalid_token"' })
  const token = parseBearer(getRequestHeader(event, 'authorization'))
  if (!token) throw invalid()
  const record = await readMockToken(ctx, token)
  const user = record ? mock.mockUsers.find(u => u.sub === record.sub) : undefined
  if (!user) throw invalid()
  return { ...user }
}
