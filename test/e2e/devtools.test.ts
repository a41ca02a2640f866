// The DevTools tab: none of it in a production build (its output is searched for the tab's
// markers), all of it on the dev server (`nuxi dev` of the playground, DevTools on), where the
// event log shows a real login's hook calls with the tokens redacted, and where the tab itself,
// opened in Nuxt DevTools in Chromium, shows and drives the app's session.
import { spawn, type ChildProcess } from 'node:child_process'
import { request } from 'node:http'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromium, type Browser, type FrameLocator, type Page } from 'playwright-core'
import { codeOf, exchange, finishLogin, startLogin } from './oauth-support'
import type { Server } from './requests'

const root = resolve(import.meta.dirname, '../..')
const playground = join(root, 'playground')
const HEADER = { 'x-svc-auth-devtools': '1' }
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
const JWT = /eyJ[\w-]+\.[\w-]+\.[\w-]+/
const PLAYGROUND_SECRET = 'playground-development-secret-change-me'

/**
 * Strings only the DevTools code carries: its route, the client plugin's name and the property it
 * provides, the page's markup marker and the header of its JSON routes.
 */
const MARKERS = ['__svc_auth__', 'svc-auth-devtools', 'svcAuthDevtools', 'data-svc-auth-devtools', 'x-svc-auth-devtools']

/** `<marker> in <file>` for each marker each file under `dir` contains (every file, read as text). */
function findMarkers(dir: string): string[] {
  const found: string[] = []
  const walk = (path: string) => {
    for (const name of readdirSync(path)) {
      const file = join(path, name)
      if (statSync(file).isDirectory()) walk(file)
      else {
        const text = readFileSync(file, 'latin1')
        for (const marker of MARKERS) if (text.includes(marker)) found.push(`${marker} in ${relative(dir, file)}`)
      }
    }
  }
  walk(dir)
  return found
}

/** Which markers the files under `dir` contain. */
const markersIn = (dir: string): string[] => [...new Set(findMarkers(dir).map(line => line.split(' in ')[0]!))].sort()

const temp: string[] = []
/** A temporary directory (its name holds no marker: build files mention their own paths). */
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  temp.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of temp.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe('a production build', () => {
  let output = ''
  let buildDir = ''

  beforeAll(async () => {
    // The playground turns DevTools on; built for production it must still contain none of the tab.
    const dir = tempDir('svc-auth-dt-build-')
    buildDir = join(dir, '.nuxt')
    output = join(dir, '.output')
    const { buildNuxt, loadNuxt } = await import('@nuxt/kit')
    const nuxt = await loadNuxt({ cwd: playground, dev: false, overrides: { buildDir, nitro: { output: { dir: output } }, devtools: { enabled: true } } })
    try {
      expect(nuxt.options.dev).toBe(false)
      await buildNuxt(nuxt)
    }
    finally {
      await nuxt.close()
    }
  }, 240_000)

  it('contains none of the DevTools routes, page, plugins or markers', () => {
    expect(statSync(join(output, 'server/index.mjs')).isFile()).toBe(true)
    expect(readdirSync(join(output, 'public/_nuxt')).length).toBeGreaterThan(0)
    expect(findMarkers(output)).toEqual([])
    expect(findMarkers(buildDir)).toEqual([])
  })

  it('the same search finds every marker in the sources', () => {
    const sources = [join(root, 'src/runtime/devtools')]
    expect([...new Set(sources.flatMap(markersIn))].sort()).toEqual([...MARKERS].sort())
  })
})

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => done(typeof address === 'object' && address ? address.port : 0))
    }).on('error', fail)
  })
}

/** Status of a GET with the DevTools header and the given Host header (fetch cannot set Host). */
function statusWithHost(origin: string, path: string, host: string): Promise<number> {
  return new Promise((done, fail) => {
    request(new URL(path, origin), { headers: { ...HEADER, host } }, (res) => {
      res.resume()
      done(res.statusCode ?? 0)
    }).on('error', fail).end()
  })
}

/** This process's environment without the test runner's variables. */
function devEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'TEST' && !name.startsWith('VITEST')))
}

describe('the dev server', () => {
  let child: ChildProcess | undefined
  let log = ''
  const server: Server = { url: '', fetch: (path, init) => fetch(`${server.url}${path}`, { redirect: 'manual', ...init }) }

  beforeAll(async () => {
    const port = await freePort()
    server.url = `http://127.0.0.1:${port}`
    child = spawn(process.execPath, [join(root, 'node_modules/@nuxt/cli/bin/nuxi.mjs'), 'dev', playground, '--host', '127.0.0.1', '--port', String(port)], {
      cwd: root,
      // Without the test runner's variables (VITEST, TEST): with them Nuxt DevTools stays off.
      env: { ...devEnv(), NODE_ENV: 'development', NUXT_TELEMETRY_DISABLED: '1', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_BASE: tempDir('svc-auth-dt-dev-'), NUXT_SVC_AUTH_LOGGING_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child.stdout!.on('data', (chunk: Buffer) => (log += chunk))
    child.stderr!.on('data', (chunk: Buffer) => (log += chunk))
    const deadline = Date.now() + 180_000
    for (;;) {
      if (child.exitCode !== null) throw new Error(`nuxi dev exited:\n${log}`)
      const res = await server.fetch('/__svc_auth__/devtools').catch(() => undefined)
      if (res?.status === 200) break
      if (Date.now() > deadline) throw new Error(`nuxi dev did not start:\n${log}`)
      await new Promise(done => setTimeout(done, 500))
    }
  }, 200_000)

  afterAll(async () => {
    if (!child || child.exitCode !== null) return
    const exited = new Promise(done => child!.once('exit', done))
    child.kill('SIGTERM')
    await exited
  })

  it('serves the tab page: self-contained, strict CSP, framed by its own origin only', async () => {
    const res = await server.fetch('/__svc_auth__/devtools', { headers: { 'sec-fetch-site': 'same-origin' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/html/)
    const csp = res.headers.get('content-security-policy')!
    const nonce = /script-src 'nonce-([\w-]+)'/.exec(csp)?.[1]
    expect(nonce).toBeTruthy()
    expect(csp).toContain(`frame-ancestors 'self'`)
    const html = await res.text()
    expect(html).toContain('data-svc-auth-devtools')
    expect(html).toContain(`<script nonce="${nonce}">`)
    expect(html).not.toMatch(/%NONCE%|%CONFIG%/)
    expect(markersIn(join(playground, '.nuxt/dev'))).toEqual(expect.arrayContaining(['__svc_auth__', 'x-svc-auth-devtools']))
  })

  it('answers JSON only with its header, from the same origin, to a loopback host', async () => {
    const missing = await server.fetch('/__svc_auth__/devtools/events')
    expect(missing.status).toBe(403)
    expect(await missing.json()).toMatchObject({ statusCode: 403, error: 'forbidden' })
    expect((await server.fetch('/__svc_auth__/devtools/events', { headers: { ...HEADER, 'sec-fetch-site': 'cross-site' } })).status).toBe(403)
    // A page of another site whose name points at 127.0.0.1 (DNS rebinding) sends its own Host.
    for (const host of ['rebound.example', `rebound.example:${new URL(server.url).port}`]) {
      expect(await statusWithHost(server.url, '/__svc_auth__/devtools/events', host)).toBe(403)
    }
    expect(await statusWithHost(server.url, '/__svc_auth__/devtools/events', `localhost:${new URL(server.url).port}`)).toBe(200)
    const bad = await server.fetch('/__svc_auth__/devtools/events?after=-1', { headers: HEADER })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ error: 'bad_request' })
    expect((await server.fetch('/__svc_auth__/devtools/events', { headers: HEADER })).status).toBe(200)
  })

  it('logs a mock login and the end of its session with their payloads, tokens redacted', async () => {
    await server.fetch('/__svc_auth__/devtools/events', { method: 'DELETE', headers: HEADER })
    const started = await startLogin(server, '/auth/mock?user=1')
    const authorize = await server.fetch(`${started.authorizeUrl.pathname}${started.authorizeUrl.search}`)
    const callback = new URL(authorize.headers.get('location')!, server.url)
    const providerCode = callback.searchParams.get('code')!
    const code = codeOf(await finishLogin(server, callback, started.cookies))
    const { body } = await exchange(server, code)
    const token = body.token as string
    const sid = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).sid as string
    // Ends the session: svc:session:revoked.
    expect((await server.fetch(`/auth/sessions/${encodeURIComponent(sid)}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } })).status).toBe(200)

    const res = await server.fetch('/__svc_auth__/devtools/events', { headers: HEADER })
    const text = await res.text()
    const { events } = JSON.parse(text) as { events: Array<{ id: number, name: string, payload: Record<string, unknown> }> }
    expect(events.map(e => e.name)).toEqual(expect.arrayContaining(['svc:userInfo', 'svc:success']))
    const success = events.find(e => e.name === 'svc:success')!
    expect(success.payload).toMatchObject({
      provider: 'mock',
      user: { sub: 'mock:una', email: 'una@example.com' },
      tokens: { access_token: '•••' },
      event: expect.stringMatching(/^\[H3Event GET \/auth\/mock\?code=•••&state=•••\]$/),
    })
    for (const secret of [token, providerCode, code, started.cookies[Object.keys(started.cookies)[0]!]!]) expect(text).not.toContain(secret)
    expect(text).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/)
    expect(events.find(e => e.name === 'svc:session:revoked')?.payload).toEqual({ sessionId: sid, userId: 'mock:una', reason: 'user' })
    expect(events.length).toBeLessThanOrEqual(50)
    const newer = await (await server.fetch(`/__svc_auth__/devtools/events?after=${success.id}`, { headers: HEADER })).json() as { events: Array<{ id: number }> }
    expect(newer.events.every(e => e.id > success.id)).toBe(true)
  })

  it('shows the resolved options with the secrets masked, and the mock users', async () => {
    const res = await server.fetch('/__svc_auth__/devtools/options', { headers: HEADER })
    const text = await res.text()
    const body = JSON.parse(text) as { options: { token: Record<string, unknown>, providers: { mock: Record<string, unknown> } }, mockUsers: unknown[] }
    expect(body.options.token).toMatchObject({ secret: '•••', algorithm: 'HS256', keyId: 'svc-auth' })
    expect(body.options.providers.mock).toMatchObject({ clientId: 'mock-client', clientSecret: '•••' })
    expect(text).not.toContain('playground-development-secret-change-me')
    expect(text).not.toContain('mock-secret')
    expect(body.mockUsers).toEqual([
      { index: 0, sub: 'ada', email: 'ada@example.com', name: 'Ada Admin' },
      { index: 1, sub: 'una', email: 'una@example.com', name: 'Una User' },
      { index: 2, sub: 'gus', email: 'gus@example.com', name: 'Gus Guest' },
    ])
  })

  describe('the tab in Nuxt DevTools (Chromium)', () => {
    let browser: Browser | undefined
    afterAll(async () => {
      await browser?.close()
    })

    /** The app's page with DevTools open on the tab; the tab's frame, found inside DevTools' own. */
    async function openTab(page: Page): Promise<FrameLocator> {
      await page.waitForFunction(() => (window as { __NUXT_DEVTOOLS_HOST__?: { devtools?: unknown } }).__NUXT_DEVTOOLS_HOST__?.devtools, undefined, { timeout: 60_000 })
      type Host = { __NUXT_DEVTOOLS_HOST__: { devtools: { open(): void, navigate(path: string): void } } }
      await page.evaluate(() => (window as unknown as Host).__NUXT_DEVTOOLS_HOST__.devtools.open())
      const devtools = page.frameLocator('#nuxt-devtools-iframe')
      // A fresh profile may see a permission prompt of DevTools (which the tab does not need).
      await devtools.getByRole('button', { name: 'Cancel' }).click({ timeout: 3_000 }).catch(() => {})
      await page.evaluate(() => (window as unknown as Host).__NUXT_DEVTOOLS_HOST__.devtools.navigate('/modules/custom-svc-auth'))
      return devtools.frameLocator('iframe[src*="__svc_auth__"]')
    }

    /** The text of the claims table's row `name`. */
    const claim = (tab: FrameLocator, name: string) => tab.locator('table.claims tr').filter({ has: tab.locator('th', { hasText: new RegExp(`^${name}$`) }) }).locator('td')

    it('shows the logged-in mock user, refreshes, lists the hook calls redacted, masks the secrets and switches users', async () => {
      const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
      browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS })
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
      // Not DevTools' welcome screen of a first visit; a panel almost as tall as the window.
      await page.addInitScript(() => {
        localStorage.setItem('nuxt-devtools-first-visit', 'false')
        if (!localStorage.getItem('nuxt-devtools-frame-state')) localStorage.setItem('nuxt-devtools-frame-state', JSON.stringify({ width: 96, height: 88, top: 0, left: 50, open: false, route: '/', position: 'bottom', closeOnOutsideClick: false, minimizePanelInactive: 5000 }))
      })
      const tabErrors: string[] = []
      page.on('console', (message) => {
        if (message.type() === 'error' && message.location().url.includes('__svc_auth__')) tabErrors.push(message.text())
      })
      const refreshes: number[] = []
      page.on('response', (response) => {
        if (response.request().method() === 'POST' && new URL(response.url()).pathname === '/auth/refresh') refreshes.push(response.status())
      })

      // Logged in as Ada through the normal mock login route: the app holds her access token.
      await page.goto(`${server.url}/auth/mock?user=0&redirect=/profile`)
      // The path, not a glob: `**/profile` also matches the start URL (`…&redirect=/profile`).
      await page.waitForURL(url => url.pathname === '/profile', { timeout: 60_000 })
      await page.locator('h2', { hasText: 'Ada Admin' }).waitFor({ timeout: 60_000 })
      let tab = await openTab(page)

      // 1. Her name, her claims and the time left.
      await expect.poll(() => tab.locator('#session-body strong').textContent(), { timeout: 60_000 }).toBe('Ada Admin')
      expect(await claim(tab, 'sub').textContent()).toBe('mock:ada')
      expect(await claim(tab, 'email').textContent()).toBe('ada@example.com')
      expect(await tab.locator('#session-body p').textContent()).toMatch(/expires in (\d+ h \d+ min|\d+:\d\d)/)
      const jti = (await claim(tab, 'jti').textContent())!
      expect(jti).toMatch(/\S{8,}/)

      // 2. Refresh: one POST to the refresh endpoint, a new access token shown (another jti).
      const before = refreshes.length
      const refreshed = page.waitForResponse(r => r.request().method() === 'POST' && new URL(r.url()).pathname === '/auth/refresh', { timeout: 30_000 })
      await tab.locator('#refresh').click()
      expect((await refreshed).status()).toBe(200)
      await expect.poll(() => claim(tab, 'jti').textContent(), { timeout: 15_000 }).not.toBe(jti)
      expect(refreshes.slice(before)).toEqual([200])
      expect(await tab.locator('#session-body strong').textContent()).toBe('Ada Admin')
      await expect.poll(() => tab.locator('#refresh').isDisabled(), { timeout: 15_000 }).toBe(false)

      // 3. The hook events: Ada's svc:success, its access token redacted.
      const success = tab.locator('#events-body details').filter({ has: tab.locator('summary code', { hasText: /^svc:success$/ }) }).filter({ hasText: 'mock:ada' }).first()
      await success.waitFor({ state: 'attached', timeout: 30_000 })
      await success.locator('summary').click()
      const payload = (await success.locator('pre').textContent())!
      expect(JSON.parse(payload)).toMatchObject({ provider: 'mock', user: { sub: 'mock:ada' }, tokens: { access_token: '•••' } })

      // 3b. The audit log's panel (the playground turns the audit log on): Ada's login among its newest events.
      const login = tab.locator('#audit-body tr[data-type="login"]').filter({ hasText: 'mock:ada → mock:ada' }).first()
      await login.waitFor({ state: 'attached', timeout: 30_000 })
      expect(await login.locator('td').nth(2).textContent()).toBe('success')

      // 4. The options: the token's secret as •••, never its value.
      const token = tab.locator('#options-body details').filter({ has: tab.locator('summary code', { hasText: /^token$/ }) })
      expect(JSON.parse((await token.locator('pre').textContent())!)).toMatchObject({ secret: '•••' })
      const html = await tab.locator('html').evaluate(el => el.outerHTML)
      expect(html).not.toContain(PLAYGROUND_SECRET)
      expect(html).not.toContain('mock-secret')
      expect(html).not.toMatch(JWT)

      // 5. Another mock user: the app logs in again as Una and comes back to the page.
      await tab.locator('#mock-body button', { hasText: 'Una User' }).click()
      await page.locator('h2', { hasText: 'Una User' }).waitFor({ timeout: 60_000 })
      expect(page.url()).toBe(`${server.url}/profile`)
      // The page was loaded again: DevTools with it.
      tab = await openTab(page)
      await expect.poll(() => tab.locator('#session-body strong').textContent(), { timeout: 60_000 }).toBe('Una User')
      expect(await claim(tab, 'sub').textContent()).toBe('mock:una')
      await expect.poll(() => tab.locator('#mock-body button.current').textContent(), { timeout: 15_000 }).toBe('Una User')
      expect(await tab.locator('html').evaluate(el => el.outerHTML)).not.toMatch(JWT)
      expect(tabErrors).toEqual([])
    }, 240_000)
  })
})
