import { existsSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import type { BrowserContext, Page } from 'playwright-core'
import { createPage } from '@nuxt/test-utils/e2e'
import { setupApp } from './app'
import type { Server } from './requests'
import { startServerProcess, type ServerProcess } from './server-processes'

const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
const JWT = /eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+/
const SESSION_EXPIRED = 'Your session has expired. Please log in again.'

if (!existsSync(executablePath)) throw new Error(`Chromium not found at ${executablePath}: apt-get install -y chromium, or set CHROMIUM_PATH`)
const server = await setupApp('client', {}, { browser: true, browserOptions: { type: 'chromium', launch: { executablePath, args: CHROMIUM_ARGS } } })
// Servers with another configuration of the client fixture, next to the one of this file.
const extraServers: ServerProcess[] = []
afterAll(() => Promise.all(extraServers.map(s => s.stop())))

interface Seen {
  method: string
  path: string
  authorization: string | undefined
}

interface Tab {
  page: Page
  context: BrowserContext
  base: string
  /** Every request to the app except assets, in order. */
  requests: Seen[]
  /** Every access token the server handed to this browser. */
  tokens: Set<string>
  /** Console messages of the page. */
  console: string[]
  /** Waits for the token answers still being read. */
  settled(): Promise<void>
  count(method: string, path: string, from?: number): number
}

/** A page in a browser context of its own (test-utils' createPage), talking to `target`. */
async function openTab(target: Server = server): Promise<Tab> {
  const page = await createPage()
  const context = page.context()
  const requests: Seen[] = []
  const tokens = new Set<string>()
  const messages: string[] = []
  const reading: Promise<void>[] = []
  page.on('console', message => messages.push(message.text()))
  page.on('request', (request) => {
    const url = new URL(request.url())
    if (url.pathname.startsWith('/_nuxt/')) return
    requests.push({ method: request.method(), path: url.pathname + url.search, authorization: request.headers().authorization })
  })
  page.on('response', (response) => {
    if (!/\/auth\/(?:token|refresh|impersonate|unimpersonate)$/.test(new URL(response.url()).pathname) || response.status() !== 200) return
    reading.push(response.json().then((body: { token?: string, accessToken?: string }) => {
      for (const t of [body.token, body.accessToken]) if (t) tokens.add(t)
    }).catch(() => {}))
  })
  return {
    page,
    context,
    base: target.url,
    requests,
    tokens,
    console: messages,
    settled: async () => {
      await Promise.all(reading)
    },
    count: (method, path, from = 0) => requests.slice(from).filter(r => r.method === method && r.path.split('?')[0] === path).length,
  }
}

async function goto(tab: Tab, path: string): Promise<void> {
  await tab.page.goto(tab.base + path)
  await tab.page.waitForSelector('html[data-hydrated]')
}

const testId = (page: Page, id: string) => page.locator(`[data-testid="${id}"]`)

async function textOf(page: Page, id: string): Promise<string> {
  return (await testId(page, id).textContent())?.trim() ?? ''
}

function pathOf(page: Page): string {
  const url = new URL(page.url())
  return url.pathname + url.search
}

/** The page is the login page, asked to come back to `back` after the login. */
function expectLoginFor(page: Page, back: string): void {
  const url = new URL(page.url())
  expect(url.pathname).toBe('/login')
  expect(url.searchParams.get('redirect')).toBe(back)
}

/** Logs in through the login page (fixture login route → callback page → POST /auth/token). */
async function login(tab: Tab, user: 'alice' | 'bob' = 'alice', landing = '/dashboard'): Promise<void> {
  await goto(tab, '/login')
  await testId(tab.page, `login-${user}`).click()
  await tab.page.waitForURL(url => url.pathname === landing)
  await testId(tab.page, 'signed-in').waitFor()
  await tab.page.waitForSelector('html[data-hydrated]')
}

async function setExpiredToken(tab: Tab, user = 'alice'): Promise<void> {
  const { token } = await (await fetch(`${tab.base}/api/test/expired-token?user=${user}`)).json() as { token: string }
  await tab.page.evaluate(t => window.__svcAuthTest!.setAccessToken(t), token)
}

declare global {
  interface Window {
    __svcAuthTest?: { setAccessToken(token: string): void, authFetch(url: string): Promise<unknown> }
    __sawSignedOut?: boolean
  }
}

describe('login and session in a real browser', () => {
  it('login page → callback → the protected page chosen before the login', async () => {
    const tab = await openTab()
    await goto(tab, '/admin')
    expectLoginFor(tab.page, '/admin')
    const before = tab.requests.length
    await testId(tab.page, 'login-alice').click()
    await tab.page.waitForURL(url => url.pathname === '/admin')
    await testId(tab.page, 'signed-in').waitFor()
    expect(await textOf(tab.page, 'signed-in')).toBe('Signed in as Alice Admin')
    expect(tab.count('GET', '/auth/callback', before)).toBe(1)
    expect(tab.count('POST', '/auth/token', before)).toBe(1)
    // The callback page does not try a startup refresh (rule 8).
    expect(tab.count('POST', '/auth/refresh', before)).toBe(0)

    await testId(tab.page, 'nav-dashboard').click()
    await testId(tab.page, 'first-hello').filter({ hasText: 'hello alice' }).waitFor()
    const hello = tab.requests.filter(r => r.path === '/api/protected/hello')
    expect(hello).toHaveLength(1)
    expect(hello[0]!.authorization).toMatch(/^Bearer eyJ/)
    await tab.settled()
    expect(tab.tokens.has(hello[0]!.authorization!.slice(7))).toBe(true)
  })

  it('a login through the mock OAuth provider runs the whole redirect flow to the chosen page', async () => {
    const tab = await openTab()
    const before = tab.requests.length
    await tab.page.goto(`${tab.base}/auth/mock?user=carol&redirect=${encodeURIComponent('/admin')}`)
    await tab.page.waitForURL(url => url.pathname === '/admin')
    await testId(tab.page, 'signed-in').waitFor()
    expect(await textOf(tab.page, 'signed-in')).toBe('Signed in as Carol Mock')
    expect(tab.count('GET', '/mock/authorize', before)).toBe(1)
    expect(tab.count('GET', '/auth/mock', before)).toBe(2)
    expect(tab.count('GET', '/auth/callback', before)).toBe(1)
    expect(tab.count('POST', '/auth/token', before)).toBe(1)
    const claims = await tab.page.evaluate(async () => {
      const res = await fetch('/auth/refresh', { method: 'POST' })
      return (await res.json()) as { token: string }
    })
    expect(JSON.parse(Buffer.from(claims.token.split('.')[1]!, 'base64url').toString())).toMatchObject({ sub: 'mock:carol', provider: 'mock' })
  })

  it('lands on redirect.success without a chosen path, and ignores a foreign one', async () => {
    const tab = await openTab()
    await tab.page.goto(`${tab.base}/api/test/login?user=bob&redirect=${encodeURIComponent('https://evil.example/')}`)
    await tab.page.waitForURL(url => url.pathname === '/dashboard')
    await testId(tab.page, 'signed-in').waitFor()
    expect(await textOf(tab.page, 'dashboard-user')).toBe('Bob Builder')
  })

  it('sends callback errors to redirect.error with the error code', async () => {
    const tab = await openTab()
    await tab.page.goto(`${tab.base}/auth/callback?code=not-a-code`)
    await tab.page.waitForURL(url => url.pathname === '/error')
    expect(new URL(tab.page.url()).searchParams.get('error')).toBe('invalid_code')
    expect(await textOf(tab.page, 'error-description')).toBe('Invalid or expired authorization code')
    await tab.page.goto(`${tab.base}/auth/callback?error=access_denied&error_description=${encodeURIComponent('The user said no')}`)
    await tab.page.waitForURL(url => url.pathname === '/error' && url.searchParams.get('error') === 'access_denied')
    expect(await textOf(tab.page, 'error-description')).toBe('The user said no')
    expect(tab.count('POST', '/auth/token')).toBe(1)
  })

  it('reload: the token is gone from memory, one startup refresh restores it, no flash of the logged-out state', async () => {
    const tab = await openTab()
    await login(tab)
    await tab.page.addInitScript(() => {
      window.__sawSignedOut = false
      const isSignedOut = (node: Node) => node instanceof Element && (node.matches('[data-testid="signed-out"]') || !!node.querySelector('[data-testid="signed-out"]'))
      new MutationObserver((records) => {
        if (records.some(r => [...r.addedNodes].some(isSignedOut))) window.__sawSignedOut = true
      }).observe(document, { childList: true, subtree: true })
    })
    const before = tab.requests.length
    const refreshed = tab.page.waitForResponse(r => r.url().endsWith('/auth/refresh'))
    const response = await tab.page.reload()
    const html = await response!.text()
    // First paint comes from the server: already logged in, with data fetched using the SSR token.
    expect(html).toContain('Signed in as Alice Admin')
    expect(html).toContain('hello alice')
    expect(html).not.toContain('data-testid="signed-out"')
    expect((await refreshed).status()).toBe(200)
    await tab.page.waitForSelector('html[data-hydrated]')
    expect(await tab.page.evaluate(() => window.__sawSignedOut)).toBe(false)
    expect(tab.count('POST', '/auth/refresh', before)).toBe(1)
    expect(tab.requests[before]!.authorization).toBeUndefined()

    const beforeLoad = tab.requests.length
    await testId(tab.page, 'load-one').click()
    await testId(tab.page, 'results').filter({ hasText: 'alice' }).waitFor()
    const calls = tab.requests.slice(beforeLoad)
    expect(calls.map(c => `${c.method} ${c.path}`)).toEqual(['GET /api/protected/hello'])
    await tab.settled()
    expect(tab.tokens.has(calls[0]!.authorization!.slice(7))).toBe(true)
    expect(await tab.page.evaluate(() => window.__sawSignedOut)).toBe(false)
    expect(tab.console.filter(m => /mismatch/i.test(m))).toEqual([])
  })

  it('an expired access token triggers exactly one refresh and one retry', async () => {
    const tab = await openTab()
    await login(tab)
    await setExpiredToken(tab)
    const before = tab.requests.length
    await testId(tab.page, 'load-one').click()
    await testId(tab.page, 'results').filter({ hasText: 'alice' }).waitFor()
    const calls = tab.requests.slice(before)
    expect(calls.map(c => `${c.method} ${c.path}`)).toEqual(['GET /api/protected/hello', 'POST /auth/refresh', 'GET /api/protected/hello'])
    expect(calls[0]!.authorization).not.toBe(calls[2]!.authorization)
    expect(calls[1]!.authorization).toBeUndefined()
    await tab.settled()
    expect(tab.tokens.has(calls[2]!.authorization!.slice(7))).toBe(true)
  })

  it('five concurrent requests with an expired token share one refresh', async () => {
    const tab = await openTab()
    await login(tab)
    await setExpiredToken(tab)
    const before = tab.requests.length
    await testId(tab.page, 'load-five').click()
    await testId(tab.page, 'results').filter({ hasText: 'alice,alice,alice,alice,alice' }).waitFor()
    const calls = tab.requests.slice(before)
    expect(tab.count('POST', '/auth/refresh', before)).toBe(1)
    const hello = calls.filter(c => c.path === '/api/protected/hello')
    expect(hello).toHaveLength(10)
    const tokens = new Set(hello.map(c => c.authorization))
    expect(tokens.size).toBe(2)
    const refreshIndex = calls.findIndex(c => c.path === '/auth/refresh')
    expect(calls.slice(0, refreshIndex).filter(c => c.path === '/api/protected/hello').length).toBeGreaterThanOrEqual(1)
    expect(new Set(calls.slice(refreshIndex + 1).map(c => c.authorization)).size).toBe(1)
  })

  it('a failed refresh clears the token and lands on the error URL with token_refresh_failed', async () => {
    const tab = await openTab()
    await login(tab)
    await setExpiredToken(tab)
    await tab.context.clearCookies()
    const before = tab.requests.length
    await testId(tab.page, 'load-one').click()
    await tab.page.waitForURL(url => url.pathname === '/error')
    const url = new URL(tab.page.url())
    expect(url.searchParams.get('error')).toBe('token_refresh_failed')
    expect(url.searchParams.get('error_description')).toBe(SESSION_EXPIRED)
    expect(url.search).toContain(`error_description=${encodeURIComponent(SESSION_EXPIRED)}`)
    await testId(tab.page, 'signed-out').waitFor()
    expect(tab.requests.slice(before).map(c => `${c.method} ${c.path.split('?')[0]}`)).toEqual(['GET /api/protected/hello', 'POST /auth/refresh'])
    // The token is gone: the protected page now sends to the login page.
    await testId(tab.page, 'nav-dashboard').click()
    await tab.page.waitForURL(url => url.pathname === '/login')
  })

  it('logout revokes the session and goes to redirect.logout', async () => {
    const tab = await openTab()
    await login(tab)
    const before = tab.requests.length
    await testId(tab.page, 'logout').click()
    await tab.page.waitForURL(url => url.pathname === '/')
    await testId(tab.page, 'signed-out').waitFor()
    expect(tab.count('POST', '/auth/logout', before)).toBe(1)
    expect((await tab.context.cookies()).map(c => c.name)).not.toContain('svc-refresh')
    await goto(tab, '/dashboard')
    expectLoginFor(tab.page, '/dashboard')
  })
})

const FLAG = 'svc-refresh-present'

/** Console errors and uncaught page errors of a tab, from now on. */
function consoleErrors(tab: Tab): string[] {
  const errors: string[] = []
  tab.page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text())
  })
  tab.page.on('pageerror', error => errors.push(error.message))
  return errors
}

async function cookieNamed(tab: Tab, name: string) {
  return (await tab.context.cookies()).find(c => c.name === name)
}

describe('no start-up refresh without a session (the presence flag)', () => {
  it('a logged-out visitor makes no refresh request and sees no console error; protected pages still send to the login page', async () => {
    const tab = await openTab()
    const errors = consoleErrors(tab)
    await goto(tab, '/login')
    await testId(tab.page, 'page-login').waitFor()
    await goto(tab, '/dashboard')
    expectLoginFor(tab.page, '/dashboard')
    await goto(tab, '/guest-named')
    await testId(tab.page, 'page-guest-named').waitFor()
    // In the browser too: a navigation to a protected page checks the session without a request.
    await goto(tab, '/')
    await testId(tab.page, 'nav-dashboard').click()
    await tab.page.waitForURL(url => url.pathname === '/login')
    expectLoginFor(tab.page, '/dashboard')
    expect(tab.count('POST', '/auth/refresh')).toBe(0)
    expect(errors).toEqual([])
    expect(await cookieNamed(tab, FLAG)).toBeUndefined()
  })

  it('login sets the flag beside the refresh cookie; a reload refreshes once; logout deletes it and the next load makes no request', async () => {
    const tab = await openTab()
    const errors = consoleErrors(tab)
    await login(tab)
    const refresh = await cookieNamed(tab, 'svc-refresh')
    const flag = await cookieNamed(tab, FLAG)
    expect(flag).toMatchObject({ value: '1', httpOnly: false, path: '/', secure: refresh!.secure, sameSite: refresh!.sameSite })
    expect(Math.abs(flag!.expires - refresh!.expires)).toBeLessThan(5)
    expect(await tab.page.evaluate(() => document.cookie)).toContain(`${FLAG}=1`)

    const before = tab.requests.length
    const refreshed = tab.page.waitForResponse(r => r.url().endsWith('/auth/refresh'))
    await tab.page.reload()
    expect((await refreshed).status()).toBe(200)
    await tab.page.waitForSelector('html[data-hydrated]')
    await testId(tab.page, 'signed-in').waitFor()
    expect(tab.count('POST', '/auth/refresh', before)).toBe(1)
    // Re-set with the rotated refresh cookie.
    expect(await cookieNamed(tab, FLAG)).toMatchObject({ value: '1' })

    await testId(tab.page, 'logout').click()
    await tab.page.waitForURL(url => url.pathname === '/')
    await testId(tab.page, 'signed-out').waitFor()
    expect(await cookieNamed(tab, FLAG)).toBeUndefined()
    const afterLogout = tab.requests.length
    await goto(tab, '/login')
    await tab.page.reload()
    await tab.page.waitForSelector('html[data-hydrated]')
    await testId(tab.page, 'page-login').waitFor()
    expect(tab.count('POST', '/auth/refresh', afterLogout)).toBe(0)
    expect(errors).toEqual([])
  })

  it('a forged flag costs one refused refresh, which deletes it', async () => {
    const tab = await openTab()
    await tab.context.addCookies([{ name: FLAG, value: '1', url: tab.base }])
    const refused = tab.page.waitForResponse(r => r.url().endsWith('/auth/refresh'))
    await goto(tab, '/login')
    expect((await refused).status()).toBe(401)
    await tab.page.waitForFunction(name => !document.cookie.includes(name), FLAG)
    expect(await cookieNamed(tab, FLAG)).toBeUndefined()
    await goto(tab, '/login')
    await goto(tab, '/guest-named')
    expect(tab.count('POST', '/auth/refresh')).toBe(1)
  })

  it('a tab that found no session picks up a login in another tab at its next navigation to a protected page', async () => {
    const tab = await openTab()
    // Without BroadcastChannel the other tab cannot hand its token over (docs/clients.md): the flag is the cue.
    await tab.page.addInitScript(() => Reflect.deleteProperty(window, 'BroadcastChannel'))
    await goto(tab, '/login')
    await testId(tab.page, 'page-login').waitFor()
    // Another tab of the same browser (opened from this one) logs in: it shares the cookies.
    await tab.page.evaluate(() => {
      const link = Object.assign(document.createElement('a'), { href: '/login', target: '_blank', id: 'open-other-tab', textContent: 'other tab' })
      document.body.append(link)
    })
    const opened = tab.context.waitForEvent('page')
    await tab.page.click('#open-other-tab')
    const other: Tab = { ...tab, page: await opened }
    await other.page.waitForSelector('html[data-hydrated]')
    await login(other)
    const before = tab.requests.length
    await testId(tab.page, 'nav-dashboard').click()
    await tab.page.waitForURL(url => url.pathname === '/dashboard')
    await testId(tab.page, 'signed-in').waitFor()
    expect(tab.count('POST', '/auth/refresh', before)).toBe(1)
    await other.page.close()
  })

  it('a session from before the flag existed gets it with its next page load and stays logged in', async () => {
    const tab = await openTab()
    await login(tab)
    await tab.context.clearCookies({ name: FLAG })
    expect(await cookieNamed(tab, FLAG)).toBeUndefined()
    const before = tab.requests.length
    const refreshed = tab.page.waitForResponse(r => r.url().endsWith('/auth/refresh'))
    const response = await tab.page.reload()
    expect((await response!.allHeaders())['set-cookie']).toContain(`${FLAG}=1`)
    expect((await refreshed).status()).toBe(200)
    await testId(tab.page, 'signed-in').waitFor()
    expect(tab.count('POST', '/auth/refresh', before)).toBe(1)
    expect(await cookieNamed(tab, FLAG)).toMatchObject({ value: '1', httpOnly: false })
  })
})

describe('sessions in two browsers', () => {
  it('one browser lists both sessions and ends the other; the other one\'s next request fails', async () => {
    const laptop = await openTab()
    const phone = await openTab()
    await login(laptop)
    await login(phone)
    await goto(laptop, '/sessions')
    await laptop.page.waitForFunction(() => document.querySelectorAll('[data-testid="session-row"]').length >= 2)
    const rows = testId(laptop.page, 'session-row')
    expect(await rows.count()).toBeGreaterThanOrEqual(2)
    expect(await laptop.page.locator('[data-testid="session-row"][data-current="true"]').count()).toBe(1)
    expect(await laptop.page.locator('[data-current="true"] [data-testid="session-client"]').textContent()).toMatch(/Chrome on Linux/)

    // End every other session of alice (the phone's among them) from the laptop.
    await testId(laptop.page, 'end-others').click()
    await laptop.page.waitForFunction(() => document.querySelector('[data-testid="session-status"]')?.textContent?.startsWith('ended others:'))
    expect(Number((await textOf(laptop.page, 'session-status')).split(': ')[1])).toBeGreaterThanOrEqual(1)
    await laptop.page.waitForFunction(() => document.querySelectorAll('[data-testid="session-row"]').length === 1)

    // The phone's next request: its access token is refused, its refresh fails, it is signed out.
    const before = phone.requests.length
    await testId(phone.page, 'load-one').click()
    await phone.page.waitForURL(url => url.searchParams.get('error') === 'token_refresh_failed')
    expect(phone.requests.slice(before).map(r => `${r.method} ${r.path.split('?')[0]}`).slice(0, 2)).toEqual(['GET /api/protected/hello', 'POST /auth/refresh'])

    // Ending the laptop's own session logs the laptop out.
    await laptop.page.locator('[data-current="true"] [data-testid="session-end"]').click()
    await laptop.page.waitForFunction(() => document.querySelector('[data-testid="session-logged-in"]')?.textContent === 'no')
    const res = await fetch(`${laptop.base}/auth/refresh`, { method: 'POST', headers: { cookie: (await laptop.context.cookies()).map(c => `${c.name}=${c.value}`).join('; ') } })
    expect(res.status).toBe(401)
  })
})

describe('client middleware', () => {
  it('sends logged-out visitors to the login page, on the server and in the browser, and honours publicRoutes and auth: false (or \'skip\')', async () => {
    const tab = await openTab()
    await goto(tab, '/dashboard')
    expectLoginFor(tab.page, '/dashboard')
    await goto(tab, '/')
    await testId(tab.page, 'nav-dashboard').click()
    await tab.page.waitForURL(url => url.pathname === '/login')
    expectLoginFor(tab.page, '/dashboard')
    for (const [path, id] of [['/public/info', 'page-public'], ['/open', 'page-open'], ['/skip', 'page-skip'], ['/guest-named', 'page-guest-named']] as const) {
      await goto(tab, path)
      expect(pathOf(tab.page)).toBe(path)
      await testId(tab.page, id).waitFor()
    }
  })

  it('sends logged-in users away from logged-out-only pages, both ways', async () => {
    const tab = await openTab()
    await login(tab)
    await testId(tab.page, 'nav-login').click()
    await tab.page.waitForURL(url => url.pathname === '/dashboard')
    await goto(tab, '/login')
    expect(pathOf(tab.page)).toBe('/dashboard')
    await goto(tab, '/guest-named')
    expect(pathOf(tab.page)).toBe('/dashboard')
    await goto(tab, '/public/info')
    await testId(tab.page, 'page-public').waitFor()
    await testId(tab.page, 'signed-in').waitFor()
  })

  it('skips the startup refresh on public routes (rule 8) and refreshes when a protected page needs it', async () => {
    const tab = await openTab()
    await login(tab)
    const before = tab.requests.length
    await goto(tab, '/public/info')
    await goto(tab, '/')
    expect(tab.count('POST', '/auth/refresh', before)).toBe(0)
    // The server still rendered the user from the cookie; the first API call gets a token.
    await testId(tab.page, 'signed-in').waitFor()
    await testId(tab.page, 'nav-dashboard').click()
    await testId(tab.page, 'first-hello').filter({ hasText: 'hello alice' }).waitFor()
    expect(tab.count('POST', '/auth/refresh', before)).toBe(1)
  })

  it('without `global`, only pages asking for it are protected (the named middleware, or auth: true or \'required\')', async () => {
    const local = await startServerProcess({ NUXT_PUBLIC_SVC_AUTH_CLIENT_MIDDLEWARE_GLOBAL: 'false' }, 'client')
    extraServers.push(local)
    const tab = await openTab(local)
    await goto(tab, '/dashboard')
    expect(pathOf(tab.page)).toBe('/dashboard')
    await testId(tab.page, 'signed-out').waitFor()
    await goto(tab, '/required')
    expectLoginFor(tab.page, '/required')
    await goto(tab, '/named')
    expectLoginFor(tab.page, '/named')
    await tab.page.goto(`${tab.base}/api/test/login?user=bob&redirect=%2Fnamed`)
    await tab.page.waitForURL(url => url.pathname === '/named')
    await testId(tab.page, 'page-named').waitFor()
  })
})

describe('login CSRF', () => {
  it('a callback link cut short in one browser and opened in another does not log that browser in', async () => {
    const attacker = await openTab()
    let link: string | undefined
    attacker.page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/auth/callback') link = request.url()
    })
    // The attacker stops their own login at the callback link: the exchange never happens.
    await attacker.page.route('**/auth/token', route => route.abort())
    await attacker.page.goto(`${attacker.base}/api/test/login?user=bob`)
    await attacker.page.waitForURL(url => url.pathname === '/error')
    expect(link).toMatch(/\/auth\/callback\?code=[\w-]+$/)

    const victim = await openTab()
    await victim.page.goto(link!)
    await victim.page.waitForURL(url => url.pathname !== '/auth/callback')
    expect(pathOf(victim.page)).toMatch(/^\/error\?/)
    expect(await textOf(victim.page, 'error-code')).toBe('code_binding_mismatch')
    const binding = (await attacker.context.cookies()).find(c => c.name === '__Host-svc-code')
    expect(binding).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/' })
    await goto(victim, '/dashboard')
    expectLoginFor(victim.page, '/dashboard')
    // The code is burnt: not even the browser it was issued to can use it now.
    await attacker.page.unroute('**/auth/token')
    await attacker.page.goto(link!)
    await attacker.page.waitForURL(url => url.pathname === '/error')
    expect(await textOf(attacker.page, 'error-code')).toBe('invalid_code')
  })
})

describe('the bearer token never leaves the app\'s origin', () => {
  it('useAuthFetch attaches it to same-origin paths only: another origin, even one that would accept it, never sees it', async () => {
    // Another loopback origin that records what reaches it and would let a bearer through CORS.
    const reached: Array<{ method: string, path: string, authorization?: string }> = []
    const recorder = createServer((req, res) => {
      reached.push({ method: req.method!, path: req.url!, authorization: req.headers.authorization })
      res.setHeader('access-control-allow-origin', '*')
      res.setHeader('access-control-allow-headers', 'authorization, content-type')
      res.setHeader('content-type', 'application/json')
      res.end('{}')
    })
    await new Promise<void>(resolve => recorder.listen(0, '127.0.0.1', resolve))
    try {
      const port = (recorder.address() as AddressInfo).port
      const tab = await openTab()
      await login(tab)
      const sent: Array<{ url: string, authorization?: string }> = []
      tab.page.on('request', request => sent.push({ url: request.url(), authorization: request.headers().authorization }))
      // The same server under another name is another origin as well.
      const appOnOtherName = tab.base.replace('127.0.0.1', 'localhost')
      const targets = [
        `http://127.0.0.1:${port}/absolute`,
        `//127.0.0.1:${port}/protocol-relative`,
        `http://127.0.0.1:${port}/api/protected/hello`,
        `${appOnOtherName}/api/protected/hello`,
      ]
      await tab.page.evaluate(async (urls) => {
        for (const url of urls) await window.__svcAuthTest!.authFetch(url).catch(() => null)
        await window.__svcAuthTest!.authFetch('/api/protected/hello')
      }, targets)
      expect(reached.map(r => r.path)).toEqual(['/absolute', '/protocol-relative', '/api/protected/hello'])
      expect(reached.filter(r => r.authorization !== undefined)).toEqual([])
      const foreign = sent.filter(r => new URL(r.url).origin !== new URL(tab.base).origin)
      expect(foreign.length).toBeGreaterThanOrEqual(targets.length)
      expect(foreign.filter(r => r.authorization !== undefined)).toEqual([])
      // The control: the same-origin path carries the token the server handed out.
      const own = sent.filter(r => r.url === `${tab.base}/api/protected/hello` && r.authorization)
      expect(own).toHaveLength(1)
      await tab.settled()
      expect(tab.tokens.has(own[0]!.authorization!.slice(7))).toBe(true)
    }
    finally {
      await new Promise(resolve => recorder.close(resolve))
    }
  })
})

describe('tokens stay in memory', () => {
  it('no access token in localStorage, sessionStorage, document.cookie, the page source or the SSR payload', async () => {
    const tab = await openTab()
    await login(tab)
    // Listening before the reload: the start-up refresh may answer before the reload resolves.
    const refreshed = tab.page.waitForResponse(r => r.url().endsWith('/auth/refresh'))
    const response = await tab.page.reload()
    const html = await response!.text()
    await refreshed
    await tab.page.waitForSelector('html[data-hydrated]')
    await testId(tab.page, 'load-one').click()
    await testId(tab.page, 'results').filter({ hasText: 'alice' }).waitFor()
    await tab.settled()
    expect(tab.tokens.size).toBeGreaterThanOrEqual(2)

    const seen = await tab.page.evaluate(() => ({
      local: JSON.stringify({ ...localStorage }),
      session: JSON.stringify({ ...sessionStorage }),
      cookie: document.cookie,
      source: document.documentElement.outerHTML,
      payload: document.getElementById('__NUXT_DATA__')?.textContent ?? '',
      nuxt: JSON.stringify((window as { __NUXT__?: unknown }).__NUXT__ ?? null),
    }))
    expect(html).not.toMatch(JWT)
    expect(seen.payload).toContain('Alice Admin')
    for (const [where, text] of Object.entries({ ...seen, html })) {
      expect(text, where).not.toMatch(JWT)
      for (const token of tab.tokens) expect(text.includes(token), where).toBe(false)
    }
    // The refresh cookie is HttpOnly; only its presence flag (no secret) is readable.
    expect(seen.cookie.split(/;\s*/).map(c => c.split('=')[0])).not.toContain('svc-refresh')
    expect(seen.local).not.toContain('svc')
    expect(seen.session).not.toContain('svc')
  })
})

describe('impersonation', () => {
  it('shows a banner while impersonating and goes back to the admin', async () => {
    const tab = await openTab()
    await login(tab)
    await testId(tab.page, 'nav-admin').click()
    await testId(tab.page, 'page-admin').waitFor()
    await testId(tab.page, 'target').fill('bob')
    await testId(tab.page, 'impersonate').click()
    await testId(tab.page, 'impersonation-banner').waitFor()
    expect(await textOf(tab.page, 'impersonation-banner')).toContain('Impersonating Bob Builder (you are Alice Admin)')
    expect(await textOf(tab.page, 'signed-in')).toBe('Signed in as Bob Builder')
    await testId(tab.page, 'nav-dashboard').click()
    await testId(tab.page, 'load-one').click()
    await testId(tab.page, 'results').filter({ hasText: 'bob' }).waitFor()

    await testId(tab.page, 'stop-impersonating').click()
    await testId(tab.page, 'impersonation-banner').waitFor({ state: 'detached' })
    expect(await textOf(tab.page, 'signed-in')).toBe('Signed in as Alice Admin')
    await testId(tab.page, 'load-one').click()
    await testId(tab.page, 'results').filter({ hasText: 'alice' }).waitFor()
    expect(tab.count('POST', '/auth/impersonate')).toBe(1)
    expect(tab.count('POST', '/auth/unimpersonate')).toBe(1)
    // The restored session has a refresh cookie again: a reload keeps the admin logged in.
    await tab.page.reload()
    await testId(tab.page, 'signed-in').filter({ hasText: 'Alice Admin' }).waitFor()
  })

  it('surfaces a refused impersonation to the caller', async () => {
    const tab = await openTab()
    await login(tab, 'bob')
    await testId(tab.page, 'nav-admin').click()
    await testId(tab.page, 'target').fill('alice')
    await testId(tab.page, 'impersonate').click()
    await testId(tab.page, 'admin-failure').filter({ hasText: 'not allowed' }).waitFor()
    expect(await testId(tab.page, 'impersonation-banner').count()).toBe(0)
  })
})

describe('options', () => {
  it('automaticRefresh false: no refresh and no retry, the 401 reaches the page', async () => {
    const local = await startServerProcess({ NUXT_PUBLIC_SVC_AUTH_TOKEN_REFRESH_AUTOMATIC_REFRESH: 'false' }, 'client')
    extraServers.push(local)
    const tab = await openTab(local)
    await login(tab)
    await setExpiredToken(tab)
    const before = tab.requests.length
    await testId(tab.page, 'load-one').click()
    await testId(tab.page, 'failure').filter({ hasText: 'failed: 401' }).waitFor()
    const calls = tab.requests.slice(before)
    expect(calls.map(c => `${c.method} ${c.path}`)).toEqual(['GET /api/protected/hello'])
    expect(calls[0]!.authorization).toMatch(/^Bearer eyJ/)
  })

  it('enableSSR false: the server renders logged out without a helper, the browser restores the session', async () => {
    const local = await startServerProcess({ NUXT_SVC_AUTH_ENABLE_SSR: 'false', NUXT_PUBLIC_SVC_AUTH_ENABLE_SSR: 'false' }, 'client')
    extraServers.push(local)
    // Logged out: the protected page is left for the login page without a refresh request.
    const visitor = await openTab(local)
    await goto(visitor, '/dashboard')
    await visitor.page.waitForURL(url => url.pathname === '/login')
    expect(visitor.count('POST', '/auth/refresh')).toBe(0)
    expect(visitor.console.filter(m => /401/.test(m))).toEqual([])

    const tab = await openTab(local)
    await login(tab)
    const response = await tab.page.reload()
    const html = await response!.text()
    expect(html).not.toContain('Signed in as')
    expect(html).toContain('no data')
    await tab.page.waitForSelector('html[data-hydrated]')
    expect(pathOf(tab.page)).toBe('/dashboard')
    await testId(tab.page, 'signed-in').waitFor()
    await testId(tab.page, 'load-one').click()
    await testId(tab.page, 'results').filter({ hasText: 'alice' }).waitFor()
    expect(tab.console.filter(m => /mismatch/i.test(m))).toEqual([])
  })
})

describe('password flows through usePassword()', () => {
  const PASSWORD = 'Sunflower-42x'
  const NEW_PASSWORD = 'Moonflower-43y'
  const NEWEST_PASSWORD = 'Starflower-44z'

  /** The last code the fixture's delivery handler got for `email` and `action`. */
  async function emailedCode(tab: Tab, email: string, action: string): Promise<string> {
    const { code } = await (await fetch(`${tab.base}/api/test/codes?email=${encodeURIComponent(email)}&action=${action}`)).json() as { code: string | null }
    expect(code).toMatch(/^\d{6}$/)
    return code!
  }

  /** Types the emailed code into the page's code form and sends it. */
  async function enterCode(tab: Tab, email: string, action: string): Promise<void> {
    await testId(tab.page, 'pending').filter({ hasText: `${action} ${email}` }).waitFor()
    await testId(tab.page, 'pw-code').fill(await emailedCode(tab, email, action))
    await testId(tab.page, 'pw-verify').click()
  }

  async function fillCredentials(tab: Tab, email: string, password: string): Promise<void> {
    await testId(tab.page, 'pw-email').fill(email)
    await testId(tab.page, 'pw-password').fill(password)
  }

  it('register → code → the page chosen before the login; a wrong code shows the module\'s error and keeps the code form', async () => {
    const tab = await openTab()
    const email = `pw-register-${Date.now()}@example.com`
    await goto(tab, `/password?redirect=${encodeURIComponent('/sessions')}`)
    await fillCredentials(tab, email, 'short')
    await testId(tab.page, 'pw-register').click()
    await testId(tab.page, 'pw-error').filter({ hasText: 'password_policy: Password does not meet the policy' }).waitFor()

    await testId(tab.page, 'pw-password').fill(PASSWORD)
    await testId(tab.page, 'pw-register').click()
    await testId(tab.page, 'pending').filter({ hasText: `register ${email}` }).waitFor()
    const right = await emailedCode(tab, email, 'register')
    await testId(tab.page, 'pw-code').fill(right === '000000' ? '111111' : '000000')
    await testId(tab.page, 'pw-verify').click()
    await testId(tab.page, 'pw-error').filter({ hasText: 'invalid_verification_code' }).waitFor()
    expect(new URL(tab.page.url()).pathname).toBe('/password')
    expect(await textOf(tab.page, 'pending')).toBe(`register ${email}`)

    const before = tab.requests.length
    await testId(tab.page, 'pw-code').fill(right)
    await testId(tab.page, 'pw-verify').click()
    await tab.page.waitForURL(url => url.pathname === '/sessions')
    await testId(tab.page, 'signed-in').waitFor()
    await testId(tab.page, 'session-count').filter({ hasText: '1' }).waitFor()
    // The callback page is reached inside the page (no page load), and exchanges the code once.
    expect(tab.requests.slice(before).map(r => `${r.method} ${r.path.split('?')[0]}`)).toEqual([
      'POST /auth/password/register-verify',
      'POST /auth/token',
      'GET /auth/sessions',
    ])
  })

  it('log in → redirect.success; change the password; reset it with the emailed code and the reset page', async () => {
    const tab = await openTab()
    const email = `pw-flows-${Date.now()}@example.com`
    await goto(tab, '/password')
    await fillCredentials(tab, email, PASSWORD)
    await testId(tab.page, 'pw-register').click()
    await enterCode(tab, email, 'register')
    await tab.page.waitForURL(url => url.pathname === '/dashboard')
    await testId(tab.page, 'logout').click()
    await tab.page.waitForURL(url => url.pathname === '/')

    // Log in: a wrong password gets the generic answer, the right one a code.
    await goto(tab, '/password')
    await fillCredentials(tab, email, NEW_PASSWORD)
    await testId(tab.page, 'pw-login').click()
    await testId(tab.page, 'pw-error').filter({ hasText: 'invalid_credentials: Invalid email or password' }).waitFor()
    await testId(tab.page, 'pw-password').fill(PASSWORD)
    await testId(tab.page, 'pw-login').click()
    await enterCode(tab, email, 'login')
    await tab.page.waitForURL(url => url.pathname === '/dashboard')
    await testId(tab.page, 'signed-in').waitFor()

    // Change (bearer token): a wrong current password is refused, the right one accepted.
    await goto(tab, '/password-change')
    await testId(tab.page, 'change-current').fill('Wrong-Password-9')
    await testId(tab.page, 'change-new').fill(NEW_PASSWORD)
    await testId(tab.page, 'change-save').click()
    await testId(tab.page, 'change-status').filter({ hasText: 'current_password_incorrect' }).waitFor()
    await testId(tab.page, 'change-current').fill(PASSWORD)
    await testId(tab.page, 'change-save').click()
    await testId(tab.page, 'change-status').filter({ hasText: 'changed' }).waitFor()
    await testId(tab.page, 'logout').click()
    await tab.page.waitForURL(url => url.pathname === '/')

    // Reset: the request's message, the code, the reset page, the new password.
    await goto(tab, '/password')
    await testId(tab.page, 'pw-email').fill(email)
    await testId(tab.page, 'pw-reset').click()
    await testId(tab.page, 'pw-notice').filter({ hasText: 'If an account exists for this email' }).waitFor()
    await expect.poll(async () => (await (await fetch(`${tab.base}/api/test/codes?email=${encodeURIComponent(email)}&action=reset`)).json() as { code: string | null }).code).toMatch(/^\d{6}$/)
    await enterCode(tab, email, 'reset')
    await tab.page.waitForURL(url => url.pathname === '/reset-password' && !!url.searchParams.get('session'))
    await tab.page.waitForSelector('html[data-hydrated]')
    await testId(tab.page, 'reset-password').fill(NEWEST_PASSWORD)
    await testId(tab.page, 'reset-save').click()
    await testId(tab.page, 'reset-status').filter({ hasText: 'reset' }).waitFor()

    // The newest password logs in; the one before does not.
    await goto(tab, '/password')
    await fillCredentials(tab, email, NEW_PASSWORD)
    await testId(tab.page, 'pw-login').click()
    await testId(tab.page, 'pw-error').filter({ hasText: 'invalid_credentials' }).waitFor()
    await testId(tab.page, 'pw-password').fill(NEWEST_PASSWORD)
    await testId(tab.page, 'pw-login').click()
    await enterCode(tab, email, 'login')
    await tab.page.waitForURL(url => url.pathname === '/dashboard')
    await testId(tab.page, 'signed-in').waitFor()
  })
})
