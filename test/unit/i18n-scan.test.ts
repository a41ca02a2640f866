import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

// Every user-facing text the module answers comes from its tables: a scan of the sources for English written
// where the tables should be used (docs/i18n.md). Logs and errors thrown for the developer are not user-facing.

const ROOT = join(import.meta.dirname, '..', '..', 'src', 'runtime')

/** What the scan leaves alone, and why. */
const EXEMPT: Record<string, string> = {
  'i18n/': 'the locale tables',
  'shared/page-texts.ts': 'the English table of the pages',
  'server/lib/edge/messages.ts': 'the English table of details and emails',
  'server/lib/edge/errors.ts': 'ERRORS, the English table of the codes',
  'devtools/': 'the DevTools tab and its endpoints: a development tool, read by the developer',
  'oauth/server/mock-provider.ts': 'the mock provider: development only, its refusals are for the developer',
}

/** The pages' own code besides their templates: every string literal of it is looked at. */
const PAGE_CODE = /(?:^|\/)app\/(?:[\w-]+-page\.ts|[\w-]+\.vue|pages\/[\w-]+\.vue)$/

const line = (source: string, index: number) => source.slice(0, index).split('\n').length

/** The outermost `<template>` of a single-file component, with its offset. */
function templateOf(source: string): { text: string, at: number } | undefined {
  const start = source.indexOf('<template>')
  const end = source.lastIndexOf('</template>')
  return start < 0 || end < start ? undefined : { text: source.slice(start + '<template>'.length, end), at: start + '<template>'.length }
}

/** A sentence or a label a user reads: a capital, then a small letter, a word or more (not an identifier, a path, a tag). */
const isProse = (text: string) => /^[A-Z][a-z]/.test(text) && !/[/_{}<>=#]|\[svc-auth\]/.test(text) && (text.includes(' ') || /^[a-z]+$/i.test(text))

/** The English a file shows or answers outside the tables: `line: what`. */
export function findEnglish(path: string, source: string): string[] {
  const found: string[] = []
  const report = (index: number, what: string) => found.push(`${path}:${line(source, index)}: ${what.replace(/\s+/g, ' ').slice(0, 80)}`)
  for (const match of source.matchAll(/authError\(\s*'[a-z_]+'\s*,\s*(['"`])((?:\\.|(?!\1).)*)\1/g)) report(match.index, `authError text ${match[2]}`)
  for (const match of source.matchAll(/createError\(\{[^}]*?\b(?:message|statusMessage)\s*:\s*(['"`])((?:\\.|(?!\1).)*)\1/g)) report(match.index, `createError text ${match[2]}`)
  if (/\/server\//.test(path)) {
    for (const match of source.matchAll(/[{,]\s*message\s*:\s*(['"`])((?:\\.|(?!\1).)*)\1/g)) {
      if (/[a-z]{2}/i.test(match[2]!)) report(match.index, `answered message ${match[2]}`)
    }
  }
  const template = path.endsWith('.vue') ? templateOf(source) : undefined
  if (template) {
    // Text between tags (their quoted attributes may hold `>`), interpolations and comments aside.
    const blank = (m: string) => ' '.repeat(m.length)
    const text = template.text.replace(/<!--[\s\S]*?-->/g, blank).replace(/\{\{[\s\S]*?\}\}/g, blank).replace(/<[^>"']*(?:(?:"[^"]*"|'[^']*')[^>"']*)*>/g, m => `\uE000${blank(m).slice(1)}`)
    for (const match of text.matchAll(/[^\uE000]+/g)) {
      if (/[a-z]{2}/i.test(match[0])) report(template.at + match.index, `template text ${match[0].trim()}`)
    }
    for (const match of template.text.matchAll(/\s(aria-label|title|placeholder|alt)="([^"]*)"/g)) {
      if (/[a-z]{2}/i.test(match[2]!)) report(template.at + match.index, `attribute ${match[1]}="${match[2]}"`)
    }
  }
  if (PAGE_CODE.test(path)) {
    const code = template ? source.slice(0, source.indexOf('<template>')) + source.slice(source.lastIndexOf('</template>')) : source
    const offset = (index: number) => (template && index >= source.indexOf('<template>') ? index + template.text.length : index)
    for (const match of code.replace(/^\s*(?:\/\/.*|\/?\*.*)$/gm, m => ' '.repeat(m.length)).matchAll(/(['"`])((?:\\.|(?!\1)[^\n])*)\1/g)) {
      if (isProse(match[2]!)) report(offset(match.index), `page code text ${match[2]}`)
    }
  }
  return found
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry => (entry.isDirectory() ? sources(join(dir, entry.name)) : /\.(?:ts|vue)$/.test(entry.name) ? [join(dir, entry.name)] : []))
}

describe('every user-facing text comes from the tables', () => {
  it('no English outside them in the routes, the server libraries and the pages', () => {
    const found: string[] = []
    const scanned: string[] = []
    for (const file of sources(ROOT)) {
      const path = relative(ROOT, file)
      if (Object.keys(EXEMPT).some(prefix => path.startsWith(prefix))) continue
      scanned.push(path)
      found.push(...findEnglish(path, readFileSync(file, 'utf8')))
    }
    // The scan saw the pages and the routes.
    expect(scanned).toEqual(expect.arrayContaining(['two-factor/app/second-factor.vue', 'organizations/app/invitation.vue', 'organizations/app/invitation-page.ts', 'audit/app/admin.vue', 'audit/app/admin-page.ts', 'server/routes/refresh.post.ts', 'password/server/policy.ts']))
    expect(found).toEqual([])
  })

  it('finds planted English of each kind', () => {
    expect(findEnglish('x/server/routes/a.post.ts', `throw authError('bad_request', 'email is required')`)).toHaveLength(1)
    expect(findEnglish('x/server/a.ts', 'throw authError(\'not_found\', `No such ${thing}`)')).toHaveLength(1)
    expect(findEnglish('x/app/a-page.ts', `showError(createError({ statusCode: 403, message: 'Nope' }))`)).toHaveLength(2)
    expect(findEnglish('x/server/a.ts', `return { success: true, message: 'A code was sent.' }`)).toHaveLength(1)
    expect(findEnglish('x/app/page.vue', '<template>\n  <main>\n    <h1>{{ t(\'title\') }}</h1>\n    <p>Welcome back</p>\n  </main>\n</template>')).toEqual(['x/app/page.vue:4: template text Welcome back'])
    expect(findEnglish('x/app/page.vue', '<template><form aria-label="Users"></form></template>')).toHaveLength(1)
    expect(findEnglish('x/app/b-page.ts', 'view.status = \'No user found.\'')).toHaveLength(1)
    // What is not user-facing: logs, the developer's errors, codes, identifiers.
    expect(findEnglish('x/server/a.ts', `ctx.logger.error('Sending the code failed', error)\nthrow authError('invalid_code')\nthrow authError('bad_request', message('no_such_team'))`)).toEqual([])
    expect(findEnglish('x/app/b-page.ts', `throw new Error('[svc-auth] A handler is missing')\nconst m = 'GET'\nconst k = 'invitation_invalid'`)).toEqual([])
  })
})
