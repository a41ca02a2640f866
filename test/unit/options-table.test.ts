import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { optionsTable, withOptionsTable } from '../../src/build/options-table'
import { defaultOptions } from '../../src/build/resolve-options'

describe('the options table of docs/options.md', () => {
  it('is the one generated from the schema (run `npm run docs:options` after changing an option)', () => {
    const doc = readFileSync(new URL('../../docs/options.md', import.meta.url), 'utf8')
    expect(withOptionsTable(doc)).toBe(doc)
  })

  it('lists every option with its default and environment variable', () => {
    const table = optionsTable()
    expect(table).toContain('| token.expiresIn | duration (seconds or `\'15m\'`) | `\'1h\'` | `NUXT_SVC_AUTH_TOKEN_EXPIRES_IN` |')
    expect(table).toContain('| tokenRefresh.cookie.maxAge | duration (seconds or `\'15m\'`) | `604800` | `NUXT_SVC_AUTH_TOKEN_REFRESH_COOKIE_MAX_AGE` |')
    expect(table).toContain('| providers.passkey.timeout | duration (milliseconds or `\'1m\'`) | `60000` |')
    for (const group of Object.keys(defaultOptions)) expect(table, group).toContain(`| ${group}`)
  })
})
