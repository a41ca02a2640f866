// Screenshots of the playground's passkey buttons for docs/passkeys.md:
// docs/screenshots/passkey-login.png (the login page) and passkey-profile.png (the profile page
// with a registered passkey).
// Usage: npx nuxi build playground && node scripts/passkey-screenshots.mjs
// Runs the built playground on a loopback port with Debian's Chromium (CHROMIUM_PATH to override)
// and a virtual authenticator (Chrome DevTools Protocol), so no real device is asked.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { freePort, launchChromium } from './lib/browser.mjs'

const root = resolve(import.meta.dirname, '..')
const out = join(root, 'docs/screenshots')

/** The built playground, its origin on `localhost` (browsers refuse passkeys on an IP address). */
async function startPlayground() {
  const port = await freePort()
  const url = `http://localhost:${port}`
  const data = mkdtempSync(join(tmpdir(), 'svc-auth-shots-'))
  const child = spawn(process.execPath, [join(root, 'playground/.output/server/index.mjs')], {
    cwd: join(root, 'playground'),
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      NODE_ENV: 'production',
      NUXT_SVC_AUTH_PUBLIC_URL: url,
      NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_BASE: data,
      NUXT_SVC_AUTH_PROVIDERS_MOCK_ENABLE_IN_PRODUCTION: 'true',
      NUXT_SVC_AUTH_LOGGING_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  await new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error('playground did not start')), 20_000)
    child.stdout.on('data', (chunk) => {
      if (String(chunk).includes('Listening on')) {
        clearTimeout(timer)
        done()
      }
    })
  })
  return {
    url,
    stop() {
      child.kill('SIGTERM')
      rmSync(data, { recursive: true, force: true })
    },
  }
}

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
  const hydrated = () => page.waitForFunction(() => document.querySelector('#__nuxt')?.__vue_app__)
  const shot = async (name) => {
    await page.waitForLoadState('networkidle')
    await page.screenshot({ path: join(out, `${name}.png`), fullPage: true })
    console.log(`docs/screenshots/${name}.png`)
  }

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
