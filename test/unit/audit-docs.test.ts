import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SECURITY_EVENTS } from '../../src/runtime/shared/event-catalog'

const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'audit.md'), 'utf8')

/** The events table of docs/audit.md as the catalog makes it. */
const table = ['| Type | What it records |', '|---|---|', ...Object.entries(SECURITY_EVENTS).map(([type, meaning]) => `| \`${type}\` | ${meaning} |`)].join('\n')

describe('docs/audit.md', () => {
  it('lists every event type of the catalog, with its meaning, in its order', () => {
    const start = '<!-- events-table:start (test/unit/audit-docs.test.ts: from src/runtime/shared/event-catalog.ts) -->\n'
    const from = doc.indexOf(start)
    const to = doc.indexOf('\n<!-- events-table:end -->')
    expect(from, 'the events table markers').toBeGreaterThan(-1)
    expect(doc.slice(from + start.length, to)).toBe(table)
  })
})
