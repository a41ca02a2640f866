import { existsSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import type { BrowserContext, Page } from 'playwright-core'
import { getBrowser } from '@nuxt/test-utils/e2e'
import { setupApp } from './app'

// Many tabs of one browser (one browser context, many pages) against the client fixture with access
// tokens of 5 seconds: one refresh for all of them, and a logout or a login seen by every tab.

const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
const LIFETIME_SECONDS = 5
/** How long the server still takes an expired token (its clock tolerance). */
const SERVER_TOLERANCE_SECONDS = 5

if (!existsSync(executablePath)) throw new Error(`Chromium not found at ${executablePath}: apt-get install -y chromium, or set CHROMIUM_PATH`)
const server = await setupApp('client', { NUXT_SVC_AUTH_TOKEN_EXPIRES_IN: String(LIFETIME_SECONDS) }, { browser: true, browserOptions: { type: 'chromium', launch: { executablePath, args: CHROMIUM_ARGS } } })

/** One browser: its context, and every request of every page of it to the app (assets aside), in order. */
interface Browser {
  context: BrowserContext
  requests: Array<{ method: string, path: string, at: number }>
  count(method: string, path: string, from?: number): number
  open(path: string): Promise<Page>
}

const contexts: BrowserContext[] = []
afterAll(() => Promise.all(contexts.map(c => c.close())))

async function newBrowser(): Promise<{ browser: Browser, first: Page }> {
  const context = await (await getBrowser()).newContext()
  contexts.push(context)
  const first = await context.newPage()
  const requests: Browser['requests'] = []
  context.on('request', (request) => {
    const url = new URL(request.url())
    if (!url.pathname.startsWith('/_nuxt/')) requests.push({ method: request.method(), path: url.pathname, at: Date.now() })
  })
  const browser: Browser = {
    context,
    requests,
    count: (method, path, from = 0) => requests.slice(from).filter(r => r.method === method && r.path === path).length,
    async open(path) {
      const page = await context.newPage()
      await goto(page, path)
      return page
    },
  }
  return { browser, first }
}

async function goto(page: Page, path: string): Promise<void> {
  await page.goto(server.url + path)
  await page.waitForSelector('html[data-hydrated]')
}

const testId = (page: Page, id: string) => page.locator(`[data-testid="${id}"]`)

/** Waits until no request to the app was made for `quiet` ms (the tabs' start-up refreshes are done). */
async function settle(browser: Browser, quiet = 1500): Promise<void> {
  for (;;) {
    const last = browser.requests.at(-1)?.at ?? 0
    const wait = last + quiet - Date.now()
    if (wait <= 0) return
    await new Promise(r => setTimeout(r, wait))
  }
}

/** Marks the page; `reloaded(page)` is true once it was loaded again since. */
async function mark(page: Page): Promise<void> {
  await page.evaluate(() => ((window as { __tabMark?: boolean }).__tabMark = true))
}
const reloaded = async (page: Page) => !(await page.evaluate(() => (window as { __tabMark?: boolean }).__tabMark))

describe('many tabs of one browser', () => {
  it('ten tabs whose tokens expire together make exactly one refresh; a logout in tab 1 logs tab 7 out without a reload', async () => {
    const { browser, first } = await newBrowser()
    await goto(first, '/login')
    await testId(first, 'login-alice').click()
    await first.waitForURL(url => url.pathname === '/dashboard')
    await testId(first, 'signed-in').waitFor()
    const tabs = [first]
    for (let i = 1; i < 10; i++) tabs.push(await browser.open('/dashboard'))
    for (const tab of tabs) await testId(tab, 'signed-in').waitFor()
    await settle(browser)

    // Every token the tabs hold has expired, also for the server (past its clock tolerance).
    const lastIssue = Math.max(...browser.requests.filter(r => r.path === '/auth/refresh' || r.path === '/auth/token').map(r => r.at))
    await new Promise(r => setTimeout(r, Math.max(0, lastIssue + (LIFETIME_SECONDS + SERVER_TOLERANCE_SECONDS + 1.5) * 1000 - Date.now())))
    const before = browser.requests.length
    await Promise.all(tabs.map(tab => testId(tab, 'load-one').click()))
    for (const tab of tabs) await testId(tab, 'results').filter({ hasText: /^alice$/ }).waitFor({ timeout: 30_000 })
    expect(browser.count('GET', '/api/protected/hello', before)).toBeGreaterThanOrEqual(11)
    expect(browser.count('POST', '/auth/refresh', before)).toBe(1)
    for (const tab of tabs) expect(await testId(tab, 'failure').textContent()).toBe('')

    // A logout in tab 1: tab 7 forgets the session at once and leaves its protected page for the login page.
    const tab7 = tabs[6]!
    await mark(tab7)
    const beforeLogout = browser.requests.length
    await testId(first, 'logout').click()
    await tab7.waitForURL(url => url.pathname === '/login', { timeout: 30_000 })
    expect(new URL(tab7.url()).searchParams.get('redirect')).toBe('/dashboard')
    await testId(tab7, 'signed-out').waitFor()
    expect(await testId(tab7, 'signed-in').count()).toBe(0)
    expect(await reloaded(tab7)).toBe(false)
    await testId(tabs[3]!, 'signed-out').waitFor()
    // The others learned it from tab 1, not from the server: no refresh, and the only logout is tab 1's.
    expect(browser.count('POST', '/auth/refresh', beforeLogout)).toBe(0)
    expect(browser.count('POST', '/auth/logout', beforeLogout)).toBe(1)
  })

  it('a login in one tab logs in the others without a request of theirs', async () => {
    const { browser, first } = await newBrowser()
    await goto(first, '/')
    const other = await browser.open('/')
    await testId(other, 'signed-out').waitFor()
    await mark(other)
    const before = browser.requests.length
    await goto(first, '/login')
    await testId(first, 'login-bob').click()
    await first.waitForURL(url => url.pathname === '/dashboard')
    await testId(other, 'signed-in').filter({ hasText: 'Bob Builder' }).waitFor()
    expect(await reloaded(other)).toBe(false)
    expect(browser.count('POST', '/auth/token', before)).toBe(1)
    expect(browser.count('POST', '/auth/refresh', before)).toBe(0)
    // Its next protected page opens at once with the handed-over token.
    await testId(other, 'nav-dashboard').click()
    await testId(other, 'first-hello').filter({ hasText: 'hello bob' }).waitFor()
    expect(browser.count('POST', '/auth/refresh', before)).toBe(0)
  })
})
