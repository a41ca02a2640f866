// Screenshots of the playground for the documentation (docs/screenshots/*.png).
// Usage: npx nuxi build playground && node scripts/screenshots.mjs
// Runs the built playground on a loopback port with Debian's Chromium (CHROMIUM_PATH to override).
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { freePort, launchChromium } from './lib/browser.mjs'

const root = resolve(import.meta.dirname, '..')
const out = join(root, 'docs/screenshots')

async function startPlayground() {
  const port = await freePort()
  const data = mkdtempSync(join(tmpdir(), 'svc-auth-shots-'))
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
  let output = ''
  child.stdout.on('data', (chunk) => {
    output += chunk
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
    /** The last code the playground printed for `email` (it prints instead of sending mail). */
    codeFor: email => [...output.matchAll(new RegExp(`code for ${email.replace('.', '\\.')}: (\\d{6})`, 'g'))].pop()?.[1],
    stop() {
      child.kill('SIGTERM')
      rmSync(data, { recursive: true, force: true })
    },
  }
}

const server = await startPlayground()
const browser = await launchChromium()
try {
  const page = await browser.newPage({ viewport: { width: 1040, height: 760 } })
  const hydrated = () => page.waitForFunction(() => document.querySelector('#__nuxt')?.__vue_app__)
  const shot = async (name) => {
    await page.waitForLoadState('networkidle')
    await page.screenshot({ path: join(out, `${name}.png`), fullPage: true })
    console.log(`docs/screenshots/${name}.png`)
  }

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
