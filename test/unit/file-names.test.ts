import { readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

// No two files of src share a name, or names that differ only by a plural `s`, an `-ion` or
// `-ate` ending, case or the way words are joined (`session.ts` and `sessions.ts`,
// `validate.ts` and `validation.ts`, `useAuth.ts` and `use-auth.ts`): a name leads to one file.

const srcDir = resolve(import.meta.dirname, '../../src')

/**
 * Files whose names are not chosen: route files (`server/routes/…`, named by their route and
 * method) and `index.ts`, named by its folder.
 */
const exempt = (file: string) => /(?:^|\/)server\/routes\//.test(file) || /(?:^|\/)index\.ts$/.test(file)

/** One word as compared: lower case, without a plural `s`, an `-ion` (with its `-at`) or an `-ate` ending. */
function stem(word: string): string {
  let w = word.toLowerCase()
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1)
  if (w.length > 4 && w.endsWith('ion')) w = w.slice(0, -3).replace(/at$/, '')
  else if (w.length > 4 && w.endsWith('ate')) w = w.slice(0, -3)
  return w
}

/** A file's name as compared: its base name without extensions, split into words, each stemmed. */
function comparableName(file: string): string {
  const base = file.split('/').pop()!.replace(/(\.d)?\.[cm]?[jt]s$|\.(vue|html)$/, '')
  return base
    .replace(/([a-z\d])([A-Z])/g, '$1-$2')
    .split(/[-_.]+/)
    .filter(Boolean)
    .map(stem)
    .join('-')
}

/** Groups of files whose names compare equal (two or more files each). */
function confusable(files: readonly string[]): string[][] {
  const groups = new Map<string, string[]>()
  for (const file of files) {
    const key = comparableName(file)
    groups.set(key, [...(groups.get(key) ?? []), file])
  }
  return [...groups.values()].filter(group => group.length > 1)
}

const files = readdirSync(srcDir, { recursive: true, encoding: 'utf8' })
  .map(file => file.split('\\').join('/'))
  .filter(file => /\.(?:[cm]?[jt]s|vue|html)$/.test(file))
  .sort()

describe('file names in src', () => {
  it('compares names by their words, without plural and -ion/-ate endings', () => {
    expect(confusable(['a/session.ts', 'b/sessions.ts'])).toEqual([['a/session.ts', 'b/sessions.ts']])
    expect(confusable(['a/validate.ts', 'b/validation.ts'])).toEqual([['a/validate.ts', 'b/validation.ts']])
    expect(confusable(['a/validate-options.ts', 'b/validation-option.ts'])).toEqual([['a/validate-options.ts', 'b/validation-option.ts']])
    expect(confusable(['a/useAuth.ts', 'b/use-auth.ts', 'c/use_auth.vue'])).toEqual([['a/useAuth.ts', 'b/use-auth.ts', 'c/use_auth.vue']])
    expect(confusable(['a/features.ts', 'b/features.d.ts'])).toEqual([['a/features.ts', 'b/features.d.ts']])
    expect(confusable(['a/format.ts', 'b/form.ts', 'c/redis.ts', 'd/address.ts', 'e/record-store.ts', 'f/records.ts'])).toEqual([])
    expect(exempt('runtime/server/routes/refresh.post.ts')).toBe(true)
    expect(exempt('runtime/passkey/server/routes/credentials.get.ts')).toBe(true)
    expect(exempt('runtime/server/lib/store/index.ts')).toBe(true)
    expect(exempt('runtime/server/lib/edge/route-rules.ts')).toBe(false)
  })

  it('has no two files with the same or a confusable name', () => {
    expect(files.length).toBeGreaterThan(150)
    const groups = confusable(files.filter(file => !exempt(file)))
    expect(groups.map(group => group.map(file => join('src', file)).join(' ~ ')), 'files whose names lead to more than one file: rename all but one').toEqual([])
  })
})
