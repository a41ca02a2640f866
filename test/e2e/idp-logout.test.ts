import { randomUUID } from 'node:crypto'
import { createServer, type Server as HttpServer } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeJwt, generateKeyPair, SignJWT } from 'jose'
import { freePort, issuerAt, startOidcServer, type OidcServer } from './oidc-server'
import { codeOf, cookieHeader, cookiesOf, finishLogin, startLogin, visitProvider } from './oauth-support'
import { startServerProcess, type ServerProcess } from './server-processes'
import { bearer, setCookieValue, tokenRequest } from './requests'
import { testRedisUrl } from '../support/test-redis'
import { deleteRedisKeys } from '../support/redis-servers'

/** Where the provider sends the browser after a logout there (allow-listed in the app and registered at the provider). */
const SIGNED_OUT = 'https://app.example/signed-out'
const EVENT = 'http://schemas.openid.net/event/backchannel-logout'

const opPort = await freePort()
const op = issuerAt(opPort)
const prefix = `svc-auth-e2e-idp-logout:${randomUUID()}:`
let oidc: OidcServer
let receiver: ServerProcess
let other: ServerProcess
let relay: HttpServer
/** The logout tokens the provider delivered (through {@link relay}), and the receiver's answers. */
const delivered: Array<{ token: string, status: number }> = []

beforeAll(async () => {
  const env = {
    NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'redis',
    NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL: testRedisUrl(),
    NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_PREFIX: prefix,
    NUXT_SVC_AUTH_PROVIDERS_CUSTOM: JSON.stringify([{ name: 'acme', clientId: 'acme-client', clientSecret: 'acme-secret', issuer: op, postLogoutRedirectUrls: [SIGNED_OUT] }]),
  }
  // Two processes of one deployment on one Redis: the provider calls one, the browser uses the other.
  ;[receiver, other] = await Promise.all([startServerProcess(env, 'oauth'), startServerProcess(env, 'oauth')])
  // In front of the receiver: keeps each logout token the provider sends, to replay it.
  const relayPort = await freePort()
  relay = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString()
      void fetch(`${receiver.url}/auth/backchannel-logout/acme`, { method: 'POST', headers: { 'content-type': req.headers['content-type'] ?? '' }, body }).then((answer) => {
        delivered.push({ token: new URLSearchParams(body).get('logout_token') ?? '', status: answer.status })
        res.writeHead(answer.status)
        res.end()
      })
    })
  })
  await new Promise<void>(resolve => relay.listen(relayPort, '127.0.0.1', () => resolve()))
  oidc = await startOidcServer({
    port: opPort,
    accounts: { alice: { email: 'alice@example.com', email_verified: true, name: 'Alice Liddell' } },
    clients: [{
      client_id: 'acme-client',
      client_secret: 'acme-secret',
      redirect_uris: [`${receiver.url}/auth/acme`, `${other.url}/auth/acme`],
      post_logout_redirect_uris: [SIGNED_OUT],
      backchannel_logout_uri: `http://127.0.0.1:${relayPort}/backchannel`,
      backchannel_logout_session_required: true,
    }],
  })
}, 60_000)

afterAll(async () => {
  await oidc?.close()
  await new Promise(resolve => relay?.close(resolve))
  await Promise.all([receiver?.stop(), other?.stop()])
  await deleteRedisKeys(prefix)
})

/** A login at `other` through the provider, in one browser (its cookies at the provider kept in `opJar`). */
async function login(opJar: Record<string, string>) {
  const started = await startLogin(other, '/auth/acme')
  started.authorizeUrl.searchParams.set('login_hint', 'alice')
  const callback = await visitProvider(started.authorizeUrl, other.url, opJar)
  const code = codeOf(await finishLogin(other, callback, started.cookies))
  const res = await other.fetch('/auth/token', tokenRequest(code))
  const body = await res.json() as { token: string }
  expect(res.status, JSON.stringify(body)).toBe(200)
  return { token: body.token, refresh: setCookieValue(res, 'svc-refresh')! }
}

const refreshWith = (server: ServerProcess, refresh: string) => server.fetch('/auth/refresh', { method: 'POST', headers: { cookie: `svc-refresh=${refresh}` } })

/** Polls until `check` holds, for at most `ms`. */
async function within(ms: number, check: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + ms
  for (;;) {
    if (await check()) return true
    if (Date.now() > deadline) return false
    await new Promise(resolve => setTimeout(resolve, 25))
  }
}

/** The browser at the provider's end-session page: confirms the logout form, returns where the provider sends it. */
async function confirmAtProvider(endSession: string, opJar: Record<string, string>): Promise<URL> {
  const page = await fetch(endSession, { redirect: 'manual', headers: { cookie: cookieHeader(opJar) } })
  Object.assign(opJar, cookiesOf(page))
  const html = await page.text()
  expect(page.status, html).toBe(200)
  const action = /<form[^>]*action="([^"]+)"/.exec(html)![1]!
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)![1]!
  const confirmed = await fetch(new URL(action, op), { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', 'cookie': cookieHeader(opJar) }, body: new URLSearchParams({ xsrf, logout: 'yes' }) })
  expect([302, 303]).toContain(confirmed.status)
  return new URL(confirmed.headers.get('location')!)
}

describe('logout at a real OpenID provider (oidc-provider), two processes on Redis', () => {
  it('RP-Initiated Logout: the end-session page takes the id_token_hint and comes back to the allow-listed URI; the provider\'s back-channel logout reaches the other process', async () => {
    const opJar: Record<string, string> = {}
    const { token, refresh } = await login(opJar)
    // A second session of the same provider session in the same browser (a second tab's login at the other process).
    const second = await login(opJar)

    const res = await other.fetch('/auth/logout', { method: 'POST', headers: { 'content-type': 'application/json', 'cookie': `svc-refresh=${refresh}` }, body: JSON.stringify({ provider: true }) })
    const { redirect } = await res.json() as { redirect: string }
    expect(res.status).toBe(200)
    const endSession = new URL(redirect)
    expect(`${endSession.origin}${endSession.pathname}`).toBe(`${op}/session/end`)
    expect(endSession.searchParams.get('client_id')).toBe('acme-client')
    expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe(SIGNED_OUT)
    expect(decodeJwt(endSession.searchParams.get('id_token_hint')!)).toMatchObject({ iss: op, aud: 'acme-client', sub: 'alice' })
    expect((await other.fetch('/api/user/me', bearer(token))).status).toBe(401)
    // The other session is alive until the provider ends its own session.
    expect((await other.fetch('/api/user/me', bearer(second.token))).status).toBe(200)

    delivered.length = 0
    const back = await confirmAtProvider(redirect, opJar)
    expect(`${back.origin}${back.pathname}`).toBe(SIGNED_OUT)
    // The provider told the receiver; the session of the second login ends on both processes.
    expect(delivered.map(d => d.status)).toEqual([200])
    // It names the provider's session (`sid`), which the ID tokens of both logins carried.
    expect(decodeJwt(delivered[0]!.token)).toMatchObject({ iss: op, aud: 'acme-client', sid: expect.any(String), events: { [EVENT]: {} } })
    expect((await refreshWith(other, second.refresh)).status).toBe(401)
    expect(await within(1000, async () => (await other.fetch('/api/user/me', bearer(second.token))).status === 401)).toBe(true)
  })

  it('the provider\'s logout token replayed at either process, and a forged one, are refused', async () => {
    const opJar: Record<string, string> = {}
    const { token } = await login(opJar)
    delivered.length = 0
    // The provider ends its session (a logout there without the app asking).
    const endSession = new URL(`${op}/session/end`)
    endSession.searchParams.set('client_id', 'acme-client')
    await confirmAtProvider(endSession.href, opJar)
    expect(delivered.map(d => d.status)).toEqual([200])
    expect(await within(1000, async () => (await other.fetch('/api/user/me', bearer(token))).status === 401)).toBe(true)

    const post = (server: ServerProcess, logoutToken: string) => server.fetch('/auth/backchannel-logout/acme', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ logout_token: logoutToken }) })
    // Replayed at either process: the jti is shared through Redis.
    expect((await post(receiver, delivered[0]!.token)).status).toBe(400)
    expect((await post(other, delivered[0]!.token)).status).toBe(400)

    const fresh = await login(opJar)
    const { privateKey } = await generateKeyPair('RS256')
    const now = Math.floor(Date.now() / 1000)
    const claims = { iss: op, aud: 'acme-client', iat: now, jti: randomUUID(), sub: 'alice', events: { [EVENT]: {} } }
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'test-key' }).sign(privateKey)
    expect(await (await post(receiver, forged)).json()).toMatchObject({ statusCode: 400, error: 'invalid_request' })
    expect((await other.fetch('/api/user/me', bearer(fresh.token))).status).toBe(200)
  })
})
