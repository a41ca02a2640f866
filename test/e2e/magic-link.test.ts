import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { createPage } from '@nuxt/test-utils/e2e'
import { setupApp } from './app'

// Login links on the built client fixture (providers.magicLink with the password handlers), in Chromium: the link
// opened in the browser that asked, and on another device (a second browser context) with its short code.
const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
if (!existsSync(executablePath)) throw new Error(`Chromium not found at ${executablePath}: apt-get install -y chromium, or set CHROMIUM_PATH`)
const server = await setupApp('client', { NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false' }, { browser: true, browserOptions: { type: 'chromium', launch: { executablePath, args: CHROMIUM_ARGS } } })

const testId = (page: Page, id: string) => page.locator(`[data-testid="${id}"]`)

/** A page in a browser context of its own (another device, as far as cookies go). */
async function device(): Promise<Page> {
  return createPage()
}

async function goto(page: Page, path: string): Promise<void> {
  await page.goto(server.url + path)
  await page.waitForSelector('html[data-hydrated]')
}

let accounts = 0
/** A password account, registered over HTTP (its email then gets links like any account). */
async function account(): Promise<string> {
  const email = `magic-${Date.now()}-${++accounts}@example.com`
  const post = (path: string, body: unknown) => fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'accept': 'application/json' }, body: JSON.stringify(body) })
  expect((await post('/auth/password/register', { email, password: 'Sunflower-42x' })).status).toBe(200)
  const { code } = await (await fetch(`${server.url}/api/test/codes?email=${encodeURIComponent(email)}&action=register`)).json() as { code: string }
  expect((await post('/auth/password/register-verify', { code, email })).status).toBe(200)
  return email
}

/** Asks for a link on the fixture's page in `page`; resolves the emailed link (relative: the fixture sets no publicUrl). */
async function askForLink(page: Page, email: string): Promise<string> {
  await goto(page, '/magic-link')
  await testId(page, 'ml-email').fill(email)
  await testId(page, 'ml-send').click()
  await testId(page, 'ml-pending').filter({ hasText: `Check ${email}` }).waitFor()
  let link: string | null = null
  for (let i = 0; i < 50 && !link; i++) {
    link = (await (await fetch(`${server.url}/api/test/codes?email=${encodeURIComponent(email)}&action=magic_link`)).json() as { link: string | null }).link
    if (!link) await new Promise(resolve => setTimeout(resolve, 100))
  }
  expect(link).toMatch(/^\/auth\/magic-link\/open#token=[\w-]{43}$/)
  return link!
}

/** The page is logged in on the fixture's `redirect.success`. */
async function loggedIn(page: Page): Promise<void> {
  await page.waitForURL(url => url.pathname === '/dashboard')
  await testId(page, 'signed-in').waitFor()
}

/** The page is logged out: a protected page sends it to the login page. */
async function loggedOut(page: Page): Promise<void> {
  await goto(page, '/dashboard')
  await page.waitForURL(url => url.pathname === '/login')
  await testId(page, 'signed-out').waitFor()
}

/** A link asked for on a laptop and opened on a phone (another browser context): both pages and the short code shown. */
async function openedElsewhere(): Promise<{ laptop: Page, phone: Page, code: string }> {
  const laptop = await device()
  const email = await account()
  const link = await askForLink(laptop, email)
  const phone = await device()
  await phone.goto(server.url + link)
  const code = (await testId(phone, 'magic-code').textContent())?.trim() ?? ''
  expect(code).toMatch(/^\d{6}$/)
  // The page names the account the link logs in.
  expect((await testId(phone, 'magic-email').textContent())?.trim()).toBe(email)
  // The token left the address bar (and so the history) once the page read it.
  expect(new URL(phone.url()).hash).toBe('')
  return { laptop, phone, code }
}

/** Types a short code into the waiting page. */
async function typeCode(laptop: Page, code: string): Promise<void> {
  await testId(laptop, 'ml-code').fill(code)
  await testId(laptop, 'ml-enter').click()
}

describe('magic links in a real browser', () => {
  it('the same browser: scanners\' GET and HEAD spend nothing, opening the link logs it in', async () => {
    const email = await account()
    const laptop = await device()
    const link = await askForLink(laptop, email)
    // A link scanner: the page without JavaScript, again and again, and HEAD.
    for (let i = 0; i < 3; i++) {
      for (const method of ['GET', 'HEAD']) expect((await fetch(server.url + link, { method })).status).toBe(200)
    }
    await laptop.goto(server.url + link)
    await loggedIn(laptop)
    // Spent: opened again, it is refused.
    await laptop.goto(server.url + link)
    await testId(laptop, 'error').filter({ hasText: 'Invalid, expired or already used login link' }).waitFor()
  })

  it('another device: the page shows a short code and logs nobody in there; typed where it was asked, it logs that browser in', async () => {
    const { laptop, phone, code } = await openedElsewhere()
    await loggedOut(phone)
    await typeCode(laptop, String((Number(code) + 1) % 1_000_000).padStart(6, '0'))
    await testId(laptop, 'ml-error').filter({ hasText: 'invalid_verification_code' }).waitFor()
    await typeCode(laptop, code)
    await loggedIn(laptop)
    await loggedOut(phone)
  })

  it('another device: "log in on this device" logs the opening browser in instead', async () => {
    const { laptop, phone, code } = await openedElsewhere()
    await testId(phone, 'this-device').click()
    await loggedIn(phone)
    // The code shown before is dead in the browser that asked.
    await typeCode(laptop, code)
    await testId(laptop, 'ml-error').filter({ hasText: 'invalid_verification_code' }).waitFor()
  })
})
