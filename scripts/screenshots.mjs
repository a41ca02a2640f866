// Screenshots of the playground for the documentation (docs/screenshots/*.png).
// Usage: npx nuxi build playground && node scripts/screenshots.mjs
// Runs the built playground on a loopback port with Debian's Chromium (CHROMIUM_PATH to override).
import { join, resolve } from 'node:path'
import { launchChromium, pageShots } from './lib/browser.mjs'
import { startPlayground } from './lib/playground.mjs'

const root = resolve(import.meta.dirname, '..')
const out = join(root, 'docs/screenshots')

const server = await startPlayground()
const browser = await launchChromium()
try {
  const page = await browser.newPage({ viewport: { width: 1040, height: 760 } })
  const { hydrated, shot } = pageShots(page, out)

  await page.goto(`${server.url}/login`)
  await hydrated()
  await shot('login')

  await page.getByRole('tab', { name: 'Create account' }).click()
  await page.fill('#email', 'grace@example.com')
  await page.fill('#password', 'Hopper-1906')
  await page.getByRole('button', { name: 'Continue' }).click()
  await page.waitForSelector('#code')
  await shot('password-code')
  // Finish the registration with the printed code: callback page, then the profile.
  await page.fill('#code', server.codeFor('grace@example.com'))
  await page.getByRole('button', { name: 'Verify' }).click()
  await page.waitForURL('**/profile')
  await page.waitForSelector('.claims')
  await page.getByRole('button', { name: 'Log out' }).click()
  await page.waitForURL(url => url.pathname === '/')

  await page.goto(`${server.url}/login`)
  await hydrated()
  await page.getByRole('button', { name: /Ada Admin/ }).click()
  await page.waitForURL('**/profile')
  await page.waitForSelector('.claims')
  await shot('profile')

  await page.getByRole('link', { name: 'Protected', exact: true }).click()
  await page.waitForSelector('main li')
  await shot('protected')

  await page.getByRole('link', { name: 'Admin', exact: true }).click()
  await page.waitForSelector('.targets')
  await shot('admin')
  await page.getByRole('button', { name: 'Impersonate' }).first().click()
  await page.waitForURL('**/profile')
  await page.waitForSelector('.banner')
  await page.waitForSelector('.claims')
  await shot('impersonation')
  await page.getByRole('button', { name: 'Stop impersonating' }).click()
  await page.waitForSelector('.banner', { state: 'detached' })

  await page.goto(`${server.url}/ssr`)
  await hydrated()
  await shot('ssr')
}
finally {
  await browser.close()
  server.stop()
}
