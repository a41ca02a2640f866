// Screenshots of the second factor for the documentation: docs/screenshots/two-factor-enrol.png
// (the profile's set-up with the QR code) and two-factor-login.png (the code prompt of a login).
// Usage: npx nuxi build playground && node scripts/two-factor-screenshots.mjs
// Runs the built playground on a loopback port with Debian's Chromium (CHROMIUM_PATH to override);
// the codes are made here from the secret the page shows, as an authenticator app would.
import { join, resolve } from 'node:path'
import { Secret, TOTP } from 'otpauth'
import { launchChromium } from './lib/browser.mjs'
import { startPlayground } from './lib/playground.mjs'

const root = resolve(import.meta.dirname, '..')
const out = join(root, 'docs/screenshots')

const server = await startPlayground()
const browser = await launchChromium()
try {
  // Una logs in with the mock provider and sets up an authenticator app on her profile.
  const settings = await browser.newPage({ viewport: { width: 1040, height: 900 } })
  await settings.goto(`${server.url}/auth/mock?user=1&redirect=/profile`)
  await settings.waitForURL('**/profile')
  await settings.getByTestId('tf-start').click()
  await settings.getByTestId('tf-qr').locator('svg').waitFor()
  const secret = (await settings.getByTestId('tf-secret').textContent()).trim()
  const totp = new TOTP({ secret: Secret.fromBase32(secret) })
  await settings.getByTestId('tf-code').fill(totp.generate({ timestamp: Date.now() - 30_000 }))
  await settings.getByTestId('two-factor-settings').screenshot({ path: join(out, 'two-factor-enrol.png') })
  await settings.getByTestId('tf-confirm').click()
  await settings.getByTestId('tf-recovery-codes').waitFor()

  // Her next login stops at the second-factor page.
  const login = await browser.newPage({ viewport: { width: 1040, height: 560 } })
  await login.goto(`${server.url}/auth/mock?user=1&redirect=/profile`)
  await login.waitForURL(/\/auth\/second-factor\?flow=/)
  await login.getByTestId('code').fill(totp.generate())
  await login.waitForLoadState('networkidle')
  await login.screenshot({ path: join(out, 'two-factor-login.png') })
  await login.getByTestId('submit').click()
  await login.waitForURL('**/profile')
  console.log('docs/screenshots/two-factor-enrol.png\ndocs/screenshots/two-factor-login.png')
}
finally {
  await browser.close()
  server.stop()
}
