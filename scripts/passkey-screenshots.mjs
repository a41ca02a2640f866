// Screenshots of the playground's passkey buttons for docs/passkeys.md:
// docs/screenshots/passkey-login.png (the login page) and passkey-profile.png (the profile page
// with a registered passkey).
// Usage: npx nuxi build playground && node scripts/passkey-screenshots.mjs
// Runs the built playground on a loopback port with Debian's Chromium (CHROMIUM_PATH to override)
// and a virtual authenticator (Chrome DevTools Protocol), so no real device is asked.
import { join, resolve } from 'node:path'
import { launchChromium, pageShots } from './lib/browser.mjs'
import { startPlayground } from './lib/playground.mjs'

const root = resolve(import.meta.dirname, '..')
const out = join(root, 'docs/screenshots')

const server = await startPlayground()
const browser = await launchChromium()
try {
  const context = await browser.newContext({ viewport: { width: 1040, height: 760 } })
  const page = await context.newPage()
  const cdp = await context.newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  })
  const { hydrated, shot } = pageShots(page, out)

  // Log in as the mock admin, register a passkey on the profile page.
  await page.goto(`${server.url}/login`)
  await hydrated()
  await page.getByRole('button', { name: /Ada Admin/ }).click()
  await page.waitForURL('**/profile')
  await hydrated()
  await page.getByPlaceholder('Name (e.g. Work laptop)').fill('Work laptop')
  await page.getByRole('button', { name: 'Register a passkey' }).click()
  await page.getByText('Work laptop').waitFor()
  await shot('passkey-profile')

  // Log out; the login page offers the passkey, and logging in with it lands on the profile.
  await page.getByRole('button', { name: 'Log out' }).click()
  await page.waitForURL(url => url.pathname === '/')
  await page.goto(`${server.url}/login`)
  await hydrated()
  await page.fill('#passkey-email', 'ada@example.com')
  await shot('passkey-login')
  await page.getByRole('button', { name: 'Log in with a passkey' }).click()
  await page.waitForURL('**/profile')
  console.log('logged in again with the passkey')
}
finally {
  await browser.close()
  server.stop()
}
