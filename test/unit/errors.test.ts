import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { authError, authErrorCode, ERRORS, isAuthErrorCode, toErrorBody, type AuthErrorCode } from '../../src/runtime/server/lib/edge/errors'

const root = join(import.meta.dirname, '..', '..')
const read = (path: string) => readFileSync(join(root, path), 'utf8')

interface TableRow {
  code: string
  status: number
  when: string
}

/** Rows of the markdown tables of `text` whose first cell is a code and second a status. */
function codeRows(text: string): TableRow[] {
  const rows: TableRow[] = []
  for (const line of text.split('\n')) {
    const match = /^\| `([a-z_]+)` \| (\d{3}) \| (.*) \|$/.exec(line.trim())
    if (match) rows.push({ code: match[1]!, status: Number(match[2]), when: match[3]! })
  }
  return rows
}

/** The section of docs/errors.md that documents every error code. */
function errorSection(): string {
  const text = read('docs/errors.md')
  const start = text.indexOf('\n## Error codes\n')
  expect(start, 'docs/errors.md has an "## Error codes" section').toBeGreaterThan(-1)
  const end = text.indexOf('\n## ', start + 1)
  return text.slice(start, end < 0 ? undefined : end)
}

/** The table the docs should hold: one row per code of the map, in its order. */
function expectedTable(documented: TableRow[]): string {
  const when = new Map(documented.map(row => [row.code, row.when]))
  return [
    '| code | status | when |',
    '|---|---|---|',
    ...Object.entries(ERRORS).map(([code, { status }]) => `| \`${code}\` | ${status} | ${when.get(code) ?? 'TODO: when it is answered'} |`),
  ].join('\n')
}

/** Every .ts file below a directory. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter(name => name.endsWith('.ts'))
    .map(name => join(dir, name))
}

describe('the error map', () => {
  it('is the error table of docs/errors.md, row for row (the message prints the table to paste)', () => {
    const documented = codeRows(errorSection())
    const expected = Object.entries(ERRORS).map(([code, { status }]) => `${code} ${status}`)
    const actual = documented.map(row => `${row.code} ${row.status}`)
    expect(actual, `docs/errors.md "## Error codes" must hold this table:\n\n${expectedTable(documented)}\n`).toEqual(expected)
  })

  it('agrees with every other error table of the docs on the status of a code', () => {
    const docs = readdirSync(join(root, 'docs')).filter(name => name.endsWith('.md') && name !== 'errors.md')
    const rows = docs.flatMap(name => codeRows(read(join('docs', name))).map(row => ({ ...row, file: name })))
    expect(rows.length).toBeGreaterThan(10)
    for (const row of rows) {
      expect(isAuthErrorCode(row.code), `${row.file}: \`${row.code}\` is not an error code`).toBe(true)
      expect(row.status, `${row.file}: status of \`${row.code}\``).toBe(ERRORS[row.code as AuthErrorCode].status)
    }
  })

  it('holds only codes the server answers with', () => {
    const server = sourceFiles('src/runtime')
      .filter(path => !path.endsWith(join('edge', 'errors.ts')))
      .map(read)
      .join('\n')
    const unused = Object.keys(ERRORS).filter(code => code !== 'internal_error' && !server.includes(`authError('${code}'`))
    expect(unused).toEqual([])
  })

  it('has a client error status and a message for every code', () => {
    for (const [code, { status, message }] of Object.entries(ERRORS)) {
      expect(code).toMatch(/^[a-z]+(?:_[a-z]+)*$/)
      expect(status >= 400 && status <= 599, code).toBe(true)
      expect(message.length, code).toBeGreaterThan(0)
    }
  })
})

describe('authError', () => {
  it('takes the status and default message of its code from the map', () => {
    const error = authError('invalid_refresh_token')
    expect(error.statusCode).toBe(401)
    expect(error.message).toBe('Invalid or expired refresh token')
    expect(authErrorCode(error)).toBe('invalid_refresh_token')
    expect(toErrorBody(authError('payload_too_large')).body).toEqual({ statusCode: 413, message: ERRORS.payload_too_large.message, error: 'payload_too_large' })
  })

  it('keeps a message and headers of its own', () => {
    const { body, headers } = toErrorBody(authError('rate_limited', undefined, { 'retry-after': '7' }))
    expect(body).toEqual({ statusCode: 429, message: 'Too many requests, try again later', error: 'rate_limited' })
    expect(headers).toEqual({ 'retry-after': '7' })
    expect(toErrorBody(authError('not_found', 'No such session')).body).toEqual({ statusCode: 404, message: 'No such session', error: 'not_found' })
  })

  it('reads no code the map does not hold', () => {
    expect(isAuthErrorCode('toString')).toBe(false)
    expect(isAuthErrorCode('nope')).toBe(false)
    expect(isAuthErrorCode(401)).toBe(false)
  })
})
