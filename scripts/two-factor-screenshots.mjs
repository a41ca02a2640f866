// Screenshots of the second factor for the documentation: docs/screenshots/two-factor-enrol.png
// (the profile's set-up with the QR code) and two-factor-login.png (the code prompt of a login).
// Usage: npx nuxi build playground && node scripts/two-factor-screenshots.mjs
// Runs the built playground on a loopback port with Debian's Chromium (CHROMIUM_PATH to override);
// the codes are made here from the secret the page shows, as an authenticator app would.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Secret, TOTP } from 'otpauth'
import { freePort, launchChromium } from './lib/browser.mjs'

const root = resolve(import.meta.dirname, '..')
const out = join(root, 'docs/screenshots')

async function startPlayground() {
  const port = await freePort()
  const data = mkdtempSync(join(tmpdir(), 'svc-auth-two-factor-shots-'))
  const child = spawn(process.execPath, [join(root, 'playground/.output/server/index.mjs')], {
    cwd: join(root, 'playground'),
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      NODE_ENV: 'production',
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
    url: `http://localhost:${port}`,
    stop() {
      child.kill('SIGTERM')
      rmSync(data, { recursive: true, force: true })
    },
  }
}

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
