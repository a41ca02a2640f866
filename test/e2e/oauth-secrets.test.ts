import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fetch } from '@nuxt/test-utils/e2e'
import { describe, expect, it } from 'vitest'
import { setupApp } from './app'
import { fixtureOutput } from './fixtures'

const SECRETS = ['google-secret', 'auth0-secret', 'microsoft-secret', 'github-secret', 'acme-secret', 'rogue-secret', 'oauth-fixture-secret-0123456789-abcdefghijkl']
await setupApp('oauth')

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })
}

describe('provider secrets never reach the browser', () => {
  it('the page (public runtime config) lists provider names but no client secret', async () => {
    // The fixture has no page at /: its 404 page carries the public runtime config all the same.
    const html = await (await fetch('/', { headers: { accept: 'text/html' } })).text()
    expect(html).toContain('svcAuth')
    expect(html).toContain('google')
    for (const secret of SECRETS) expect(html).not.toContain(secret)
  })

  it('no built client file contains a client secret', () => {
    const files = filesUnder(join(fixtureOutput('oauth'), 'public'))
    expect(files.some(f => f.endsWith('.js'))).toBe(true)
    for (const file of files) {
      const text = readFileSync(file, 'utf8')
      for (const secret of SECRETS) expect(text, file).not.toContain(secret)
    }
  })
})
