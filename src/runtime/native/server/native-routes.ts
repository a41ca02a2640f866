import { z } from 'zod'
import type { RouteContract } from '../../server/lib/edge/route-contract'
import { featureRoute } from '../../server/lib/edge/route-contract'

/** A PKCE code verifier (RFC 7636 §4.1): 43 to 128 unreserved characters. */
export const CODE_VERIFIER = /^[\w.~-]{43,128}$/
/** A PKCE S256 challenge: base64url of a SHA-256 (43 characters). */
export const CODE_CHALLENGE = /^[\w-]{43}$/

const refreshToken = z.string().min(1).max(512).describe('The refresh token of the session (never a cookie\'s)')

/** `POST <authPath>/native/token`. */
export const nativeTokenRequest = z.object({
  code: z.string().min(1).max(512).describe('The code the login returned to the app\'s redirect URI'),
  codeVerifier: z.string().regex(CODE_VERIFIER, 'must be a PKCE code verifier (43 to 128 characters)').describe('The PKCE verifier whose S256 challenge started the login'),
})

/** `POST <authPath>/native/refresh` and `/logout`. */
export const nativeRefreshRequest = z.object({ refreshToken })

const count = z.number().int().nonnegative()
const jwt = z.string().min(1).describe('Signed JWT access token')

/** The answer of the native token and refresh endpoints. */
export const nativeTokenResponse = z.strictObject({
  accessToken: jwt,
  token: jwt,
  expiresIn: count.describe('Lifetime of the access token in seconds'),
  tokenType: z.literal('Bearer'),
  refreshToken: z.string().min(1).describe('Keep it in the platform\'s secure storage; each refresh answers its successor'),
  refreshExpiresIn: count.describe('Lifetime of the refresh token in seconds'),
})

/** The query of `GET <authPath>/native/login/<provider>` (RFC 8252). */
export const nativeLoginQuery = z.object({
  redirect_uri: z.string().describe('One of `native.redirectUris` exactly (a loopback one on any port)'),
  code_challenge: z.string().regex(CODE_CHALLENGE).describe('S256 challenge of the app\'s PKCE verifier'),
  code_challenge_method: z.literal('S256'),
  state: z.string().max(512).optional().describe('The app\'s state, returned to its redirect URI unchanged'),
})

const NATIVE_NOTE = 'Native and server clients only: a request with an `Origin` or `Sec-Fetch-*` header or the refresh cookie is refused (403 `browser_request`).'

/** The native endpoints under `<authPath>/native/` (registered when `native` is set). */
export const NATIVE_ROUTES = {
  token: {
    id: 'NativeToken', ...featureRoute('native', 'token', 'post'),
    summary: 'Native app: exchange a login code for tokens',
    description: `Exchanges the code of a native login for an access token and a refresh token, both in the answer. The code is bound to the PKCE challenge the login started with: \`codeVerifier\` must be its verifier. A code presented once is used up whatever the outcome; codes of the browser flow are refused. ${NATIVE_NOTE}`,
    nonBrowser: true,
    body: nativeTokenRequest,
    ok: { schema: nativeTokenResponse, description: 'The access token and the refresh token' },
    errors: ['invalid_code', 'code_binding_mismatch', 'not_found'],
  },
  refresh: {
    id: 'NativeRefresh', ...featureRoute('native', 'refresh', 'post'),
    summary: 'Native app: get a new access token with the refresh token',
    description: `Rotates the refresh token of the body like the cookie's (the same successor to every use within \`tokenRefresh.reuseGracePeriod\`; a rotated token used after it revokes the session) and answers the successor. A browser session's refresh token is refused. ${NATIVE_NOTE}`,
    nonBrowser: true,
    body: nativeRefreshRequest,
    ok: { schema: nativeTokenResponse, description: 'A new access token and the successor refresh token' },
    errors: ['invalid_refresh_token', 'refresh_token_reused', 'impersonated_session', 'not_found'],
  },
  logout: {
    id: 'NativeLogout', ...featureRoute('native', 'logout', 'post'),
    summary: 'Native app: log out',
    description: `Revokes the session of the refresh token (any token of the session ends it, one rotated since too). Succeeds for an unknown token too. ${NATIVE_NOTE}`,
    nonBrowser: true,
    body: nativeRefreshRequest,
    ok: { schema: z.strictObject({ success: z.literal(true) }), description: 'Logged out' },
    errors: [],
  },
  login: {
    id: 'NativeLogin', ...featureRoute('native', 'login/:provider', 'get', 'login'),
    summary: 'Native app: log in with an OAuth provider (RFC 8252)',
    description: 'Opened in the system browser. Runs the provider\'s login, then redirects to `redirect_uri` with `code` and the app\'s `state`; the code is bound to `code_challenge`. Once `redirect_uri` is known to be listed, every failure returns there as `error` (and `error_description`) with `state`; an unlisted one answers 400 `invalid_request` and is never redirected to.',
    params: { provider: z.string().min(1).max(64) },
    query: nativeLoginQuery,
    ownInput: true,
    redirect: 'The provider, then `redirect_uri?code=…&state=…` or `redirect_uri?error=…&state=…`',
    errors: ['invalid_request'],
  },
} satisfies Record<string, RouteContract>
