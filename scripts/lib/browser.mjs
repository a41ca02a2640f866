// What the screenshot scripts share: a free loopback port and Debian's Chromium, headless.
import { createServer } from 'node:net'
import { join } from 'node:path'
import { chromium } from 'playwright-core'

/** A TCP port free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((done, fail) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => done(port))
    }).on('error', fail)
  })
}

/** Chromium (CHROMIUM_PATH, else /usr/bin/chromium) with the flags a closed network needs. */
export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}

/**
 * What a script needs to photograph the pages of a Nuxt app: `hydrated()` waits until the app
 * runs in the page, `shot(name)` waits for the network to settle and writes `<dir>/<name>.png`
 * of the whole page.
 */
export function pageShots(page, dir) {
  return {
    hydrated: () => page.waitForFunction(() => document.querySelector('#__nuxt')?.__vue_app__),
    async shot(name) {
      await page.waitForLoadState('networkidle')
      await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true })
      console.log(`docs/screenshots/${name}.png`)
    },
  }
}
