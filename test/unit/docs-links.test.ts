import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..', '..')

/** README.md and every docs/*.md, as paths relative to the repository root. */
const documents = ['README.md', ...readdirSync(join(root, 'docs')).filter(name => name.endsWith('.md')).sort().map(name => join('docs', name))]

/** The text of a markdown file without fenced code blocks and inline code (no links or headings there). */
function prose(text: string): string {
  const lines: string[] = []
  let fence: string | undefined
  for (const line of text.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined
      lines.push('')
      continue
    }
    if (marker) {
      fence = marker
      lines.push('')
      continue
    }
    lines.push(line.replace(/(`+)[^`]*\1/g, ''))
  }
  return lines.join('\n')
}

/**
 * The anchor GitHub gives a heading: its text as rendered (inline code kept, link targets and
 * emphasis markers dropped), lowercased, punctuation and symbols removed, spaces made hyphens.
 */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    // Emphasis markers go, outside inline code only; the code keeps its text.
    .split(/(`+[^`]*`+)/)
    .map(part => part.startsWith('`') ? part.replace(/`/g, '') : part.replace(/(\*{1,2}|\b_{1,2})(\S(?:.*?\S)?)\1(?!\w)/g, '$2'))
    .join('')
  return text.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-')
}

/** Every anchor of a markdown file: heading slugs (numbered -1, -2, … when repeated) and HTML ids. */
function anchors(path: string): Set<string> {
  const text = readFileSync(join(root, path), 'utf8')
  const found = new Set<string>()
  const seen = new Map<string, number>()
  let fence: string | undefined
  for (const line of text.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined
      continue
    }
    if (marker) {
      fence = marker
      continue
    }
    const heading = /^ {0,3}#{1,6}[ \t](.*)$/.exec(line)?.[1]
    if (heading !== undefined) {
      const base = slug(heading.trim().replace(/[ \t]#+$/, ''))
      const count = seen.get(base) ?? 0
      seen.set(base, count + 1)
      found.add(count === 0 ? base : `${base}-${count}`)
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(match[1]!)
  }
  return found
}

interface Link {
  file: string
  line: number
  target: string
}

/** Inline links and images of a file, and reference definitions, with their line numbers. */
function links(file: string): Link[] {
  const text = prose(readFileSync(join(root, file), 'utf8'))
  const found: Link[] = []
  text.split('\n').forEach((line, index) => {
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) found.push({ file, line: index + 1, target: match[1]! })
    const definition = /^ {0,3}\[[^\]]+\]:[ \t]*<?([^\s>]+)/.exec(line)
    if (definition) found.push({ file, line: index + 1, target: definition[1]! })
  })
  return found
}

/** Why a link does not resolve, or undefined when it does. Links to other sites are not followed. */
function brokenBecause(link: Link): string | undefined {
  if (/^[a-z][a-z\d+.-]*:/i.test(link.target)) return undefined
  const [pathPart = '', anchor] = link.target.split('#', 2) as [string, string | undefined]
  const path = decodeURIComponent(pathPart)
  const target = path === '' ? link.file : relative(root, join(root, dirname(link.file), path))
  if (target.startsWith('..')) return `${link.target} leaves the repository`
  if (!existsSync(join(root, target))) return `${target} does not exist`
  if (anchor === undefined || anchor === '') return undefined
  if (statSync(join(root, target)).isDirectory() || !target.endsWith('.md')) return `${target} is not a markdown file, so #${anchor} cannot resolve`
  return anchors(target).has(decodeURIComponent(anchor)) ? undefined : `${target} has no heading #${anchor}`
}

describe('links of README.md and docs/*.md', () => {
  it('slugs headings as GitHub does', () => {
    expect(slug('Refresh token rotation')).toBe('refresh-token-rotation')
    expect(slug('Authorization codes are bound to the browser (login CSRF, code injection)')).toBe('authorization-codes-are-bound-to-the-browser-login-csrf-code-injection')
    expect(slug('Redis over HTTP (the upstash driver): threat model')).toBe('redis-over-http-the-upstash-driver-threat-model')
    expect(slug('Rate limits (`svcAuth.rateLimit`)')).toBe('rate-limits-svcauthratelimit')
    expect(slug('Where it runs, the storage to pick')).toBe('where-it-runs-the-storage-to-pick')
    expect(slug('Decisions where the specification says "not shown"')).toBe('decisions-where-the-specification-says-not-shown')
    expect(slug('A key for `two_factor` data')).toBe('a-key-for-two_factor-data')
  })

  it('finds the links to check', () => {
    const all = documents.flatMap(links)
    expect(all.length).toBeGreaterThan(50)
    expect(all.some(link => link.target.includes('#'))).toBe(true)
  })

  it('resolve: every relative link names a file that exists, and every #anchor a heading of it', () => {
    const broken = documents.flatMap(links).flatMap((link) => {
      const why = brokenBecause(link)
      return why ? [`${link.file}:${link.line}: (${link.target}) ${why}`] : []
    })
    expect(broken).toEqual([])
  })
})
