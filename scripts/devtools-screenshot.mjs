// Screenshot of the DevTools tab for the documentation (docs/screenshots/devtools.png).
// Usage: node scripts/devtools-screenshot.mjs
// Runs `nuxi dev playground` on a loopback port (the tab exists in development only), logs in as a
// mock user in Debian's Chromium (CHROMIUM_PATH to override), opens Nuxt DevTools on the tab and
// stops the dev server again.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { freePort, launchChromium } from './lib/browser.mjs'

const root = resolve(import.meta.dirname, '..')
const out = join(root, 'docs/screenshots/devtools.png')

async function startDevServer() {
  const port = await freePort()
  const data = mkdtempSync(join(tmpdir(), 'svc-auth-devtools-shot-'))
  const child = spawn(process.execPath, [join(root, 'node_modules/@nuxt/cli/bin/nuxi.mjs'), 'dev', 'playground', '--host', '127.0.0.1', '--port', String(port)], {
    cwd: root,
    env: { ...process.env, NUXT_TELEMETRY_DISABLED: '1', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_BASE: data, NUXT_SVC_AUTH_LOGGING_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', chunk => (output += chunk))
  child.stderr.on('data', chunk => (output += chunk))
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 120_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the dev server exited:\n${output}`)
    const ready = await fetch(`${url}/__svc_auth__/devtools`).then(res => res.ok, () => false)
    if (ready && output.includes('Nitro server built')) break
    if (Date.now() > deadline) throw new Error(`the dev server did not start:\n${output}`)
    await new Promise(done => setTimeout(done, 500))
  }
  return {
    url,
    stop() {
      child.kill('SIGTERM')
      rmSync(data, { recursive: true, force: true })
    },
  }
}

const server = await startDevServer()
let browser
try {
  browser = await launchChromium()
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  // Not DevTools' welcome screen of a first visit; a panel almost as tall as the window.
  await page.addInitScript(() => {
    localStorage.setItem('nuxt-devtools-first-visit', 'false')
    if (!localStorage.getItem('nuxt-devtools-frame-state')) localStorage.setItem('nuxt-devtools-frame-state', JSON.stringify({ width: 96, height: 88, top: 0, left: 50, open: false, route: '/', position: 'bottom', closeOnOutsideClick: false, minimizePanelInactive: 5000 }))
  })
  // Log in as Ada through the normal mock login route, then end an impersonation-free session.
  await page.goto(`${server.url}/auth/mock?user=0&redirect=/profile`)
  await page.waitForURL('**/profile', { timeout: 60_000 })
  await page.waitForSelector('.claims', { timeout: 60_000 })
  // Open DevTools on the tab (the host client of Nuxt DevTools in the app's window).
  await page.waitForFunction(() => window.__NUXT_DEVTOOLS_HOST__?.devtools, undefined, { timeout: 60_000 })
  await page.evaluate(() => window.__NUXT_DEVTOOLS_HOST__.devtools.open())
  const devtools = page.frameLocator('#nuxt-devtools-iframe')
  // A fresh profile may see a permission prompt of DevTools (which the tab does not need).
  await devtools.getByRole('button', { name: 'Cancel' }).click({ timeout: 5_000 }).catch(() => {})
  await page.evaluate(() => window.__NUXT_DEVTOOLS_HOST__.devtools.navigate('/modules/custom-svc-auth'))
  const tab = devtools.frameLocator('iframe[src*="__svc_auth__"]')
  await tab.locator('table.claims').waitFor({ timeout: 60_000 })
  await tab.locator('#events-body details').first().waitFor({ timeout: 30_000 })
  await tab.locator('#sessions-body table').waitFor({ timeout: 30_000 })
  // Show one event's payload and the options.
  await tab.locator('#events-body details summary').first().click()
  await page.waitForTimeout(500)
  await page.screenshot({ path: out })
  console.log('docs/screenshots/devtools.png')
}
finally {
  await browser?.close()
  server.stop()
}
