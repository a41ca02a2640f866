import { createHash, randomBytes } from 'node:crypto'
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { exportJWK, generateKeyPair } from 'jose'
import Provider, { type ClientMetadata } from 'oidc-provider'
import { freePort } from './server-processes'

/**
 * A real OpenID Connect provider (oidc-provider) on loopback. Logins are finished without a form:
 * the account is the `login_hint` of the authorization request, else `defaultAccount`; the
 * account `deny` makes the provider answer `error=access_denied`. Its end-session page
 * (`end_session_endpoint`) asks to confirm with a form; a client with `backchannel_logout_uri`
 * gets the logout token of a session ended there.
 */
export interface OidcServer {
  issuer: string
  port: number
  close(): Promise<void>
}

export interface OidcAccount {
  email?: string
  email_verified?: boolean
  name?: string
  picture?: string
  [claim: string]: unknown
}

/** The issuer of a provider that will listen on `port` (known before the provider starts). */
export const issuerAt = (port: number) => `http://127.0.0.1:${port}`

export async function startOidcServer({ port, clients, accounts, defaultAccount = 'alice' }: { port: number, clients: ClientMetadata[], accounts: Record<string, OidcAccount>, defaultAccount?: string }): Promise<OidcServer> {
  const issuer = issuerAt(port)
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const provider = new Provider(issuer, {
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' }] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
    clients: clients.map(c => ({ grant_types: ['authorization_code'], response_types: ['code'], ...c })),
    findAccount: (_ctx, id) => (accounts[id] ? { accountId: id, claims: () => ({ sub: id, ...accounts[id] }) } : undefined),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'picture', 'given_name', 'family_name'] },
    // RP-Initiated Logout (its end-session page) and Back-Channel Logout to clients that register a URI for it.
    features: { devInteractions: { enabled: false }, rpInitiatedLogout: { enabled: true }, backchannelLogout: { enabled: true } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
    cookies: { keys: ['oidc-test-cookie-key-0123456789'] },
    // Its own requests (back-channel logouts) go to the apps on loopback: without its guard against private addresses.
    fetch: (url, options) => globalThis.fetch(url, { ...options, dispatcher: undefined } as RequestInit),
  })
  const callback = provider.callback()

  async function finishInteraction(req: IncomingMessage, res: ServerResponse) {
    const details = await provider.interactionDetails(req, res)
    const accountId = details.params.login_hint ?? defaultAccount
    if (accountId === 'deny') {
      await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The user refused' }, { mergeWithLastSubmission: false })
      return
    }
    const grant = new provider.Grant({ accountId, clientId: details.params.client_id! })
    grant.addOIDCScope(details.params.scope ?? 'openid')
    const grantId = await grant.save()
    await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false })
  }

  const server = createServer((req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      finishInteraction(req, res).catch((error: unknown) => {
        res.statusCode = 500
        res.end(String(error))
      })
      return
    }
    callback(req, res)
  })
  await listen(server, port)
  return { issuer, port, close: () => close(server) }
}

/**
 * A token endpoint in front of the provider's that swaps the client credentials: the provider
 * then issues an id_token for the other client (another audience), validly signed.
 */
export async function startCredentialSwapProxy({ port, target, basicAuth }: { port: number, target: string, basicAuth: string }): Promise<{ url: string, close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const upstream = httpRequest(target, {
        method: 'POST',
        headers: { 'content-type': req.headers['content-type'] ?? '', 'accept': 'application/json', 'authorization': `Basic ${basicAuth}`, 'content-length': body.length },
      }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, { 'content-type': answer.headers['content-type'] ?? 'application/json' })
        answer.pipe(res)
      })
      upstream.on('error', () => {
        res.statusCode = 502
        res.end()
      })
      upstream.end(body)
    })
  })
  await listen(server, port)
  return { url: `http://127.0.0.1:${port}/token`, close: () => close(server) }
}

export interface GitHubUser {
  profile: Record<string, unknown>
  emails: Array<{ email: string, primary: boolean, verified: boolean }>
}

/**
 * A stand-in for github.com's OAuth endpoints and the REST API's `/user` and `/user/emails`:
 * the authorize endpoint redirects straight back with a code for `login` (query) or the first user;
 * the token endpoint checks the client (in the body, as GitHub expects), the code and PKCE.
 */
export async function startGitHubStandIn({ port, clientId, clientSecret, users }: { port: number, clientId: string, clientSecret: string, users: Record<string, GitHubUser> }): Promise<{ url: string, close(): Promise<void> }> {
  const codes = new Map<string, { login: string, challenge: string, redirectUri: string }>()
  const tokens = new Map<string, string>()
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body))
  }
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`)
    if (url.pathname === '/login/oauth/authorize') {
      const login = url.searchParams.get('login') ?? Object.keys(users)[0]!
      const code = randomBytes(16).toString('hex')
      codes.set(code, { login, challenge: url.searchParams.get('code_challenge') ?? '', redirectUri: url.searchParams.get('redirect_uri') ?? '' })
      const back = new URL(url.searchParams.get('redirect_uri')!)
      back.searchParams.set('code', code)
      back.searchParams.set('state', url.searchParams.get('state') ?? '')
      res.writeHead(302, { location: back.href })
      res.end()
      return
    }
    if (url.pathname === '/login/oauth/access_token' && req.method === 'POST') {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const form = new URLSearchParams(Buffer.concat(chunks).toString())
        if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) return send(res, 200, { error: 'incorrect_client_credentials' })
        const entry = codes.get(form.get('code') ?? '')
        codes.delete(form.get('code') ?? '')
        const verifier = form.get('code_verifier') ?? ''
        if (!entry || entry.redirectUri !== form.get('redirect_uri') || createHash('sha256').update(verifier).digest('base64url') !== entry.challenge) {
          return send(res, 200, { error: 'bad_verification_code' })
        }
        const token = randomBytes(16).toString('hex')
        tokens.set(token, entry.login)
        send(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' })
      })
      return
    }
    const login = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''))
    if (!login || req.headers['user-agent'] === undefined) return send(res, 401, { message: 'Requires authentication' })
    if (url.pathname === '/user') return send(res, 200, users[login]!.profile)
    if (url.pathname === '/user/emails') return send(res, 200, users[login]!.emails)
    send(res, 404, { message: 'Not Found' })
  })
  await listen(server, port)
  return { url: `http://127.0.0.1:${port}`, close: () => close(server) }
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve())
  })
}

function close(server: Server): Promise<void> {
  return new Promise(resolve => server.close(() => resolve()))
}

export { freePort }
