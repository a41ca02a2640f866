// The built playground (`npx nuxi build playground`) on a loopback port, for the screenshot
// scripts: production mode with the mock provider on, sessions in a throwaway directory.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { freePort } from './browser.mjs'

const root = resolve(import.meta.dirname, '..', '..')

/**
 * Starts the built playground and resolves once it listens. Its origin is `http://localhost:<port>`
 * (also its `publicUrl`: browsers refuse passkeys on an IP address).
 * @returns {Promise<{ url: string, codeFor: (email: string) => string | undefined, stop: () => void }>} its origin, the codes it printed, and a stop function
 */
export async function startPlayground() {
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
    url,
    /** The last code the playground printed for `email` (it prints instead of sending mail). */
    codeFor: email => [...output.matchAll(new RegExp(`code for ${email.replace('.', '\\.')}: (\\d{6})`, 'g'))].pop()?.[1],
    stop() {
      child.kill('SIGTERM')
      rmSync(data, { recursive: true, force: true })
    },
  }
}
