import { existsSync } from 'node:fs'
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CookieJar } from '../helpers/cookie-jar'
import { SoftAuthenticator } from '../unit/helpers/webauthn'
import { freePort, startServerProcess, type ServerProcess } from './server-processes'

// The passkey fixture on a port of its own, its origin given as NUXT_SVC_AUTH_PUBLIC_URL on
// `localhost` (browsers refuse WebAuthn on an IP address).
const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
if (!existsSync(executablePath)) throw new Error(`Chromium not found at ${executablePath}: apt-get install -y chromium, or set CHROMIUM_PATH`)

let server: ServerProcess
let base = ''
/** The same server for node's fetch (which may resolve `localhost` to ::1, where it does not listen). */
let direct = ''

beforeAll(async () => {
  const port = await freePort()
  base = `http://localhost:${port}`
  direct = `http://127.0.0.1:${port}`
  server = await startServerProcess({ PORT: String(port), NUXT_SVC_AUTH_PUBLIC_URL: base }, 'passkey')
})
afterAll(() => server?.stop())

/** Where a client sends its requests: the site's origin, and the same server for node's fetch. */
interface Site {
  base: string
  direct: string
}

/** A client with a cookie jar that follows the app's redirects (a browser without JavaScript). */
class Client {
  readonly cookies = new CookieJar()
  token = ''

  /** `site`: another server than the file's. */
  constructor(private readonly site?: Site) {}

  private get base(): string {
    return this.site?.base ?? base
  }

  async fetch(path: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = { ...init.headers }
    if (this.cookies.size) headers.cookie = this.cookies.header()
    if (this.token && !headers.authorization) headers.authorization = `Bearer ${this.token}`
    const response = await fetch((this.site?.direct ?? direct) + path.replace(this.base, ''), { ...init, headers, redirect: 'manual' })
    this.cookies.store(response)
    return response
  }

  post(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return this.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body ?? {}) })
  }

  /** Exchanges the code of the callback page for an access token (and the refresh cookie). */
  async exchange(location: string): Promise<Response> {
    const code = new URL(location, this.base).searchParams.get('code')!
    const answer = await this.post('/auth/token', { code })
    if (answer.ok) this.token = ((await answer.clone().json()) as { accessToken: string }).accessToken
    return answer
  }

  /** The mock provider's login, redirect by redirect, then the code exchange. */
  async mockLogin(): Promise<void> {
    let location = '/auth/mock'
    for (let hop = 0; hop < 5 && !location.startsWith('/auth/callback'); hop++) {
      const answer = await this.fetch(location)
      expect(answer.status, location).toBe(302)
      location = answer.headers.get('location')!.replace(this.base, '')
    }
    expect((await this.exchange(location)).status).toBe(200)
  }
}

describe('passkeys over HTTP', () => {
  const authenticator = () => new SoftAuthenticator({ origin: base, rpID: 'localhost' })

  it('registers a passkey for a logged-in user, then logs in with it: the usual code, token and session', async () => {
    const owner = new Client()
    await owner.mockLogin()
    const key = authenticator()
    const creation = await (await owner.post('/auth/passkey/register/options')).json() as PublicKeyCredentialCreationOptionsJSON
    expect(creation.rp).toEqual({ id: 'localhost', name: 'Passkey Fixture' })
    const registered = await owner.post('/auth/passkey/register/verify', { response: key.register(creation), name: 'HTTP key' })
    expect(registered.status).toBe(200)
    expect(await (await owner.fetch('/auth/passkey/credentials')).json()).toMatchObject({ credentials: [{ id: key.id, name: 'HTTP key' }] })

    const visitor = new Client()
    const request = await (await visitor.post('/auth/passkey/login/options', { email: 'pat@example.com' })).json() as PublicKeyCredentialRequestOptionsJSON
    expect(request.allowCredentials?.map(c => c.id)).toContain(key.id)
    const verified = await visitor.post('/auth/passkey/login/verify', { response: key.assert(request) })
    expect(verified.status).toBe(200)
    const { redirect } = await verified.json() as { redirect: string }
    expect(redirect).toMatch(/^\/auth\/callback\?code=/)
    expect((await visitor.exchange(redirect)).status).toBe(200)
    expect(visitor.cookies.get('__Host-svc-refresh') ?? visitor.cookies.get('svc-refresh')).toBeTruthy()
    const me = await (await visitor.fetch('/api/user/me')).json() as { sub: string, provider: string, email: string }
    expect(me).toMatchObject({ sub: 'user-pat', provider: 'passkey', email: 'pat@example.com' })
  })

  it('refuses a replayed assertion, which starts no session', async () => {
    const owner = new Client()
    await owner.mockLogin()
    const key = authenticator()
    const creation = await (await owner.post('/auth/passkey/register/options')).json() as PublicKeyCredentialCreationOptionsJSON
    expect((await owner.post('/auth/passkey/register/verify', { response: key.register(creation) })).status).toBe(200)
    const visitor = new Client()
    const request = await (await visitor.post('/auth/passkey/login/options')).json() as PublicKeyCredentialRequestOptionsJSON
    const response = key.assert(request)
    expect((await visitor.post('/auth/passkey/login/verify', { response })).status).toBe(200)
    const replay = await visitor.post('/auth/passkey/login/verify', { response })
    expect(replay.status).toBe(400)
    expect(await replay.json()).toEqual({ statusCode: 400, message: expect.any(String), error: 'invalid_passkey_challenge' })
    expect(replay.headers.getSetCookie().filter(line => /svc-refresh/.test(line))).toEqual([])
  })

  it('refuses cross-site requests and answers malformed bodies with 400 JSON', async () => {
    const visitor = new Client()
    const crossSite = await visitor.post('/auth/passkey/login/options', {}, { 'origin': 'https://evil.example', 'sec-fetch-site': 'cross-site' })
    expect(crossSite.status).toBe(403)
    expect(await crossSite.json()).toMatchObject({ error: 'cross_origin_request' })
    const malformed = await visitor.fetch('/auth/passkey/login/verify', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"response":{"id":1}}' })
    expect(malformed.status).toBe(400)
    expect(await malformed.json()).toMatchObject({ statusCode: 400, error: 'bad_request' })
  })

  it('refuses to register with options fetched while the session was fresh once it is stale; a fresh login registers', async () => {
    // One more process whose recent-login window is short.
    const recentLogin = 8
    const port = await freePort()
    const site = { base: `http://localhost:${port}`, direct: `http://127.0.0.1:${port}` }
    const short = await startServerProcess({ PORT: String(port), NUXT_SVC_AUTH_PUBLIC_URL: site.base, NUXT_SVC_AUTH_SESSIONS_RECENT_LOGIN: `${recentLogin}s` }, 'passkey')
    try {
      const key = new SoftAuthenticator({ origin: site.base, rpID: 'localhost' })
      const owner = new Client(site)
      const loggedInAt = Date.now()
      await owner.mockLogin()
      const creation = await (await owner.post('/auth/passkey/register/options')).json() as PublicKeyCredentialCreationOptionsJSON
      // Generous margins: the options were fetched well within the window, the answer comes well after it.
      expect(Date.now() - loggedInAt).toBeLessThan(recentLogin * 1000 / 2)
      await new Promise(resolve => setTimeout(resolve, loggedInAt + (recentLogin + 2) * 1000 - Date.now()))
      const stale = await owner.post('/auth/passkey/register/verify', { response: key.register(creation) })
      expect(stale.status).toBe(403)
      expect(await stale.json()).toEqual({ statusCode: 403, message: expect.any(String), error: 'reauthentication_required' })
      expect(await (await owner.fetch('/auth/passkey/credentials')).json()).toEqual({ credentials: [] })

      const again = new Client(site)
      await again.mockLogin()
      const fresh = await (await again.post('/auth/passkey/register/options')).json() as PublicKeyCredentialCreationOptionsJSON
      expect((await again.post('/auth/passkey/register/verify', { response: key.register(fresh) })).status).toBe(200)
      expect(short.output()).toMatch(/\[svc-auth:security\] request\.refused[\s\S]*recent_login/)
    }
    finally {
      await short.stop()
    }
  })

  it('refuses every ceremony of a production server without a relying party, and says so when it starts', async () => {
    const bare = await startServerProcess({}, 'passkey')
    try {
      const answer = await bare.fetch('/auth/passkey/login/options', { method: 'POST', headers: { 'content-type': 'application/json', 'host': 'localhost' }, body: '{}' })
      expect(answer.status).toBe(500)
      expect(await answer.json()).toMatchObject({ statusCode: 500, error: 'passkey_not_configured' })
      expect(bare.output()).toMatch(/Passkeys are on but no relying party is configured/)
    }
    finally {
      await bare.stop()
    }
  })
})

describe('passkeys in Chromium with a virtual authenticator', () => {
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let cdp: CDPSession
  let authenticatorId = ''
  const verifyBodies: string[] = []

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS })
    context = await browser.newContext()
    page = await context.newPage()
    cdp = await context.newCDPSession(page)
    await cdp.send('WebAuthn.enable')
    ;({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    }))
    page.on('request', (request) => {
      if (request.url().endsWith('/auth/passkey/login/verify')) verifyBodies.push(request.postData() ?? '')
    })
  })
  afterAll(() => browser?.close())

  const testId = (id: string) => page.locator(`[data-testid="${id}"]`)

  async function open(path: string): Promise<void> {
    await page.goto(base + path)
    await page.waitForSelector('html[data-hydrated]')
  }

  async function logOut(): Promise<void> {
    await testId('logout').click()
    await page.waitForURL(url => url.pathname === '/login')
    await testId('signed-out').waitFor()
    await page.waitForSelector('html[data-hydrated]')
  }

  async function expectLoggedInWithPasskey(): Promise<void> {
    await page.waitForURL(url => url.pathname === '/profile')
    await expect.poll(async () => (await testId('signed-in').textContent().catch(() => '')) ?? '').toContain('(user-pat, passkey)')
  }

  it('registers a passkey on the profile page after a mock login', async () => {
    await open('/login')
    await testId('login-mock').click()
    await page.waitForURL(url => url.pathname === '/profile')
    await testId('signed-in').waitFor()
    await page.waitForSelector('html[data-hydrated]')
    // The user has the passkeys the HTTP tests registered (the server's host table is shared).
    await expect.poll(() => testId('passkey').count()).toBeGreaterThan(0)
    const before = await testId('passkey').count()
    await testId('register-passkey').click()
    await expect.poll(() => testId('passkey').filter({ hasText: 'Test key' }).count()).toBe(1)
    expect(await testId('passkey').count()).toBe(before + 1)
    expect(await testId('profile-error').textContent()).toBe('')
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
    expect(credentials).toHaveLength(1)
    expect(credentials[0]!.isResidentCredential).toBe(true)
  })

  it('logs out, then logs in with the passkey without a username', async () => {
    await logOut()
    await testId('login-passkey').click()
    await expectLoggedInWithPasskey()
  })

  it('logs out, then logs in with the passkey of an email', async () => {
    await logOut()
    await testId('passkey-email').fill('pat@example.com')
    await testId('login-passkey-email').click()
    await expectLoggedInWithPasskey()
  })

  it('refuses the captured assertion posted again: no session', async () => {
    const captured = verifyBodies.at(-1)!
    expect(JSON.parse(captured)).toMatchObject({ response: { type: 'public-key', response: { signature: expect.any(String) } } })
    const replay = await context.request.post(`${base}/auth/passkey/login/verify`, { data: captured, headers: { 'content-type': 'application/json', 'origin': base } })
    expect(replay.status()).toBe(400)
    expect(await replay.json()).toMatchObject({ error: 'invalid_passkey_challenge' })
    expect(replay.headers()['set-cookie'] ?? '').not.toMatch(/svc-refresh/)
  })

  it('surfaces a cancelled prompt as a rejected login with NotAllowedError', async () => {
    await logOut()
    await page.evaluate(() => {
      // The user dismisses the browser's prompt: it rejects with NotAllowedError.
      navigator.credentials.get = () => Promise.reject(new DOMException('The operation either timed out or was not allowed.', 'NotAllowedError'))
    })
    await testId('login-passkey').click()
    await expect.poll(async () => testId('login-error').textContent()).toMatch(/^NotAllowedError: The passkey request was cancelled or timed out\./)
    await testId('signed-out').waitFor()
  })
})
