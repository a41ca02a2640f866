import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPage, type NuxtPage } from '@nuxt/test-utils/e2e'
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../support/chromium'
import { setupApp } from './app'
import { fixtureDir } from './fixtures'

/**
 * Every page of the playground (playground/pages, as routes), loaded in full in Chromium logged
 * out and logged in through the mock provider: no page may log a hydration warning or error (the
 * server-rendered HTML and the first render in the browser must agree).
 */
const PAGES = (readdirSync(join(fixtureDir('playground'), 'pages'), { recursive: true }) as string[])
  .filter(file => file.endsWith('.vue') && !file.includes('['))
  .map(file => `/${file.replace(/\\/g, '/').replace(/\.vue$/, '').replace(/(^|\/)index$/, '')}`)
  .sort()

// The server renders in UTC; the browser is elsewhere, with another language, as many visitors are.
const server = await setupApp('playground', {
  TZ: 'UTC',
  NUXT_SVC_AUTH_PROVIDERS_MOCK_ENABLE_IN_PRODUCTION: 'true',
  NUXT_SVC_AUTH_LOGGING_LEVEL: 'warn',
}, { browser: true, browserOptions: { type: 'chromium', launch: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS } } })
const VISITOR = { timezoneId: 'Asia/Kolkata', locale: 'de-DE' }

/** A page in a browser context of its own (test-utils' createPage, also from a hook: `server.url` sets its context first). */
async function newPage(): Promise<NuxtPage> {
  void server.url
  return createPage(undefined, VISITOR)
}

/**
 * A full load of `path`: the console lines that speak of hydration, where it ended (after
 * redirects) and the HTML the server sent.
 */
async function load(page: NuxtPage, path: string): Promise<{ at: string, html: string, hydration: string[] }> {
  const lines: string[] = []
  const listen = (message: { type(): string, text(): string }) => lines.push(`${message.type()}: ${message.text()}`)
  const crash = (error: Error) => lines.push(`pageerror: ${error.message}`)
  page.on('console', listen)
  page.on('pageerror', crash)
  let html = ''
  try {
    html = await (await page.goto(server.url + path, { waitUntil: 'hydration' }))?.text() ?? ''
    await page.waitForLoadState('networkidle')
  }
  finally {
    page.off('console', listen)
    page.off('pageerror', crash)
  }
  return { at: new URL(page.url()).pathname, html, hydration: lines.filter(line => /hydrat/i.test(line)) }
}

it('finds the pages', () => {
  expect(PAGES).toContain('/')
  expect(PAGES).toContain('/profile')
})

describe('logged out', () => {
  let page: NuxtPage
  beforeAll(async () => {
    page = await newPage()
  })
  afterAll(() => page?.close())

  it.each(PAGES)('%s hydrates without a mismatch', async (path) => {
    const { hydration } = await load(page, path)
    expect(hydration).toEqual([])
  })
})

describe('logged in through the mock provider', () => {
  let page: NuxtPage
  beforeAll(async () => {
    page = await newPage()
    await page.goto(`${server.url}/auth/mock?user=ada`)
    await page.waitForURL(url => url.pathname === '/profile')
    await page.waitForSelector('.claims td')
  })
  afterAll(() => page?.close())

  it.each(PAGES)('%s hydrates without a mismatch', async (path) => {
    const { at, hydration } = await load(page, path)
    // Still logged in: no protected page sent the visitor to the login page.
    if (path !== '/login') expect(at).not.toBe('/login')
    expect(hydration).toEqual([])
  })

  it('/projects, which needs project:write, is the 403 error page for a user without it: not the page, not the login page', async () => {
    const response = await page.goto(`${server.url}/projects`)
    await page.waitForLoadState('networkidle')
    expect(response?.status()).toBe(403)
    expect(new URL(page.url()).pathname).toBe('/projects')
    expect(await page.content()).not.toContain('You may write projects')
  })

  it('/profile has the claims in the server-rendered HTML (so that the check above covers their table)', async () => {
    const { html, hydration } = await load(page, '/profile')
    expect(html).toMatch(/<table class="claims"[^>]*>/)
    expect(html).toMatch(/<th[^>]*>sub<\/th><td[^>]*>mock:ada<\/td>/)
    expect(hydration).toEqual([])
  })
})
