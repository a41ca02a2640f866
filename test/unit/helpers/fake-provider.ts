import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createHash, randomBytes } from 'node:crypto'
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose'

/** Paths of a provider's endpoints on its server (issuer relative to the server's base URL). */
export interface FakePaths {
  authorize: string
  token: string
  userinfo: string
  /** OpenID Connect only. */
  jwks?: string
  discovery?: string
  issuer?: string
}

export interface FakeProviderOptions {
  paths: FakePaths
  clientId: string
  clientSecret: string
  /** The profile `userinfo` answers (OpenID Connect: `sub` is set from `subject`). */
  profile: Record<string, unknown>
  /** OpenID Connect: id_tokens are issued for this subject. */
  subject?: string
  /** More JSON endpoints that need the bearer token (GitHub's `/user/emails`, …). */
  resources?: Record<string, unknown>
  /** Refresh tokens: issued with every access token and taken by the `refresh_token` grant (`rotate`: each one once). */
  refresh?: { rotate: boolean }
}

export interface SeenRequest {
  method: string
  path: string
  /** The Authorization header, when the request had one. */
  authorization?: string
}

/**
 * A provider on a loopback HTTP server (127.0.0.1, random port) that serves the documented paths:
 * the authorization endpoint answers 302 back to `redirect_uri` with a code, the token endpoint
 * checks client, code, redirect URI and PKCE (client by HTTP Basic or in the body) and, for OpenID
 * Connect, answers an RS256 id_token signed with jose; userinfo and the extra resources need the
 * issued bearer token. `change` alters the next answers (id_token claims, signing key, profile).
 */
export async function startFakeProvider(o: FakeProviderOptions) {
  const { privateKey, publicKey } = await generateKeyPair('RS256')
  const jwk = { ...(await exportJWK(publicKey)), kid: 'fake-1', alg: 'RS256', use: 'sig' }
  const codes = new Map<string, { nonce?: string, challenge: string, redirectUri: string, scope: string }>()
  const tokens = new Set<string>()
  const seen: SeenRequest[] = []
  const clientAuth: Array<'basic' | 'post'> = []
  const change = {
    claims: {} as JWTPayload,
    sign: (claims: JWTPayload) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'fake-1' }).sign(privateKey),
    profile: {} as Record<string, unknown>,
    /** Lifetime of the next access tokens, in seconds. */
    expiresIn: 300,
    /** The next refresh grants fail with this status and body (`invalid_grant`: 400 `{ error: 'invalid_grant' }`). */
    refreshFailure: undefined as { status: number, body: unknown } | undefined,
    /** The refresh grant answers after this many milliseconds. */
    refreshDelayMs: 0,
  }
  const refreshTokens = new Set<string>()
  /** Refresh grants answered with new tokens. */
  const refreshes = { count: 0 }
  let base = ''
  const issuer = () => `${base}${o.paths.issuer ?? ''}`
  const url = (path: string | undefined) => (path ? `${base}${path}` : undefined)

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers })
    res.end(JSON.stringify(body))
  }
  const readBody = (req: IncomingMessage) => new Promise<string>((resolve) => {
    let body = ''
    req.on('data', (chunk: Buffer) => (body += chunk.toString()))
    req.on('end', () => resolve(body))
  })

  async function token(req: IncomingMessage, res: ServerResponse) {
    const form = new URLSearchParams(await readBody(req))
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1]
    const [id, secret] = basic
      ? Buffer.from(basic, 'base64').toString().split(':').map(s => decodeURIComponent(s.replace(/\+/g, ' ')))
      : [form.get('client_id'), form.get('client_secret')]
    clientAuth.push(basic ? 'basic' : 'post')
    if (id !== o.clientId || secret !== o.clientSecret) return send(res, 401, { error: 'invalid_client' })
    if (form.get('grant_type') === 'refresh_token') return refresh(form.get('refresh_token') ?? '', res)
    const entry = codes.get(form.get('code') ?? '')
    codes.delete(form.get('code') ?? '')
    const challenge = createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url')
    if (!entry || entry.challenge !== challenge || entry.redirectUri !== form.get('redirect_uri')) return send(res, 400, { error: 'invalid_grant' })
    const accessToken = randomBytes(16).toString('hex')
    tokens.add(accessToken)
    const answer: Record<string, unknown> = { access_token: accessToken, token_type: 'Bearer', expires_in: change.expiresIn, scope: entry.scope, ...newRefreshToken() }
    if (o.paths.jwks && entry.scope.split(' ').includes('openid')) {
      const now = Math.floor(Date.now() / 1000)
      answer.id_token = await change.sign({ iss: issuer(), aud: o.clientId, sub: o.subject, iat: now, exp: now + 300, nonce: entry.nonce, ...change.claims })
    }
    send(res, 200, answer)
  }

  function newRefreshToken(): { refresh_token?: string } {
    if (!o.refresh) return {}
    const token = randomBytes(16).toString('hex')
    refreshTokens.add(token)
    return { refresh_token: token }
  }

  async function refresh(token: string, res: ServerResponse) {
    if (change.refreshDelayMs) await new Promise(resolve => setTimeout(resolve, change.refreshDelayMs))
    if (change.refreshFailure) return send(res, change.refreshFailure.status, change.refreshFailure.body)
    if (!refreshTokens.has(token)) return send(res, 400, { error: 'invalid_grant' })
    if (o.refresh?.rotate) refreshTokens.delete(token)
    refreshes.count++
    const accessToken = randomBytes(16).toString('hex')
    tokens.add(accessToken)
    send(res, 200, { access_token: accessToken, token_type: 'Bearer', expires_in: change.expiresIn, ...(o.refresh?.rotate ? newRefreshToken() : {}) })
  }

  /** A refresh token the provider accepts (as if a login had issued it). */
  function issueRefreshToken(): string {
    return newRefreshToken().refresh_token!
  }

  function authorize(query: URLSearchParams, res: ServerResponse) {
    if (query.get('client_id') !== o.clientId || query.get('response_type') !== 'code' || query.get('code_challenge_method') !== 'S256') {
      return send(res, 400, { error: 'invalid_request' })
    }
    const code = randomBytes(12).toString('hex')
    const redirectUri = query.get('redirect_uri') ?? ''
    codes.set(code, { nonce: query.get('nonce') ?? undefined, challenge: query.get('code_challenge') ?? '', redirectUri, scope: query.get('scope') ?? '' })
    const back = new URL(redirectUri)
    back.searchParams.set('code', code)
    back.searchParams.set('state', query.get('state') ?? '')
    res.writeHead(302, { location: back.href })
    res.end()
  }

  function withBearer(req: IncomingMessage, res: ServerResponse, body: () => unknown) {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1]
    if (!bearer || !tokens.has(bearer)) return send(res, 401, { error: 'invalid_token' }, { 'www-authenticate': 'Bearer error="invalid_token"' })
    send(res, 200, body())
  }

  const server = createServer((req, res) => {
    const target = new URL(req.url ?? '/', base)
    const path = target.pathname
    seen.push({ method: req.method ?? 'GET', path, authorization: req.headers.authorization })
    const p = o.paths
    if (req.method === 'GET' && path === p.authorize) return authorize(target.searchParams, res)
    if (req.method === 'POST' && path === p.token) return void token(req, res)
    if (req.method === 'GET' && path === p.userinfo) {
      return withBearer(req, res, () => ({ ...o.profile, ...(o.subject ? { sub: o.subject } : {}), ...change.profile }))
    }
    if (req.method === 'GET' && p.jwks && path === p.jwks) return send(res, 200, { keys: [jwk] })
    if (req.method === 'GET' && p.discovery && path === p.discovery) {
      return send(res, 200, {
        issuer: issuer(),
        authorization_endpoint: url(p.authorize),
        token_endpoint: url(p.token),
        userinfo_endpoint: url(p.userinfo),
        jwks_uri: url(p.jwks),
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        code_challenge_methods_supported: ['S256'],
      })
    }
    if (req.method === 'GET' && o.resources && Object.hasOwn(o.resources, path)) return withBearer(req, res, () => o.resources![path])
    send(res, 404, { error: 'not_found' })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', () => resolve()))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  return {
    base,
    issuer: issuer(),
    seen,
    clientAuth,
    change,
    refreshes,
    issueRefreshToken,
    /** True while the provider accepts this access token. */
    accepts: (accessToken: string) => tokens.has(accessToken),
    /** Requests that carried a bearer token, by path. */
    bearerPaths: () => seen.filter(r => r.authorization?.startsWith('Bearer ')).map(r => r.path),
    reset() {
      seen.length = 0
      clientAuth.length = 0
      change.claims = {}
      change.profile = {}
      change.expiresIn = 300
      change.refreshFailure = undefined
      change.refreshDelayMs = 0
      refreshes.count = 0
      change.sign = claims => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'fake-1' }).sign(privateKey)
    },
    close: () => new Promise<void>(resolve => server.close(() => resolve())),
  }
}

export type FakeProvider = Awaited<ReturnType<typeof startFakeProvider>>

/** Keycloak's documented paths for realm `realm`. */
export function keycloakPaths(realm: string): FakePaths {
  const issuer = `/realms/${realm}`
  const oidc = `${issuer}/protocol/openid-connect`
  return { issuer, discovery: `${issuer}/.well-known/openid-configuration`, authorize: `${oidc}/auth`, token: `${oidc}/token`, userinfo: `${oidc}/userinfo`, jwks: `${oidc}/certs` }
}

/** GitLab's documented paths. */
export const GITLAB_PATHS: FakePaths = { issuer: '', discovery: '/.well-known/openid-configuration', authorize: '/oauth/authorize', token: '/oauth/token', userinfo: '/oauth/userinfo', jwks: '/oauth/discovery/keys' }

/** Discord's documented paths (OAuth 2.0, no OpenID Connect). */
export const DISCORD_PATHS: FakePaths = { authorize: '/oauth2/authorize', token: '/api/oauth2/token', userinfo: '/api/users/@me' }

/** GitHub's documented paths (web and REST API on one fake server). */
export const GITHUB_PATHS: FakePaths = { authorize: '/login/oauth/authorize', token: '/login/oauth/access_token', userinfo: '/user' }
