import { createHash, hkdfSync } from 'node:crypto'
import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { describe, expect, it, vi } from 'vitest'
import { createError, createEvent } from 'h3'
import { createKeyHasher, createSealer, deriveKey, plainSealer, randomBelow, randomBytes, randomDigits, randomToken, safeEqual } from '../../src/runtime/server/lib/store/crypto'
import { authError, sendAuthError, toErrorBody } from '../../src/runtime/server/lib/edge/errors'
import { createLogger } from '../../src/runtime/server/lib/edge/logger'
import { bearerCandidate, parseBearer, resolveAuthRule } from '../../src/runtime/server/lib/edge/route-rules'
import { resolveAuthValue } from '../../src/runtime/shared/auth-value'
import { authMetaOf } from '../../src/runtime/app/lib/access'
import type { LogLevel } from '../../src/runtime/types/options'

const SECRET = 'primitives-secret-0123456789-abcdefghijkl'
const OTHER_SECRET = 'primitives-other-secret-9876543210-zyxwvu'
const KEY = 'encryption-key-0123456789-abcdefghijklmnop'
const OTHER_KEY = 'encryption-key-other-0123456789-qrstuvwxyz'

const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex')

interface SinkCall {
  method: 'error' | 'warn' | 'info' | 'debug'
  args: unknown[]
}

/** A console stand-in that records every call. */
function fakeSink() {
  const calls: SinkCall[] = []
  const record = (method: SinkCall['method']) => (...args: unknown[]) => {
    calls.push({ method, args })
  }
  return { calls, sink: { error: record('error'), warn: record('warn'), info: record('info'), debug: record('debug') } }
}

/** Replace the character at `index` with another base64url character. */
function flipChar(text: string, index: number): string {
  const c = text[index]
  return text.slice(0, index) + (c === 'A' ? 'B' : 'A') + text.slice(index + 1)
}

describe('resolveAuthValue: one vocabulary for route rules and page meta', () => {
  it.each([
    [true, 'required'], ['required', 'required'], ['protected', 'required'],
    [false, 'public'], ['public', 'public'], ['skip', 'public'],
    ['guest', 'guest'],
  ] as const)('%j → %s', (value, requirement) => {
    expect(resolveAuthValue(value)).toBe(requirement)
  })

  it.each([undefined, null, 'other', 'Guest', 'Required', 'true', 1, 0, '', {}, ['required']])('%j → undefined', (value) => {
    expect(resolveAuthValue(value)).toBeUndefined()
  })

  it('the server and the client read every value alike (the client adds only \'guest\')', () => {
    for (const value of [true, 'required', 'protected', false, 'public', 'skip', 'guest', 'other', undefined]) {
      const client = authMetaOf({ auth: value })
      expect(resolveAuthRule(value), String(value)).toBe(client === 'guest' ? undefined : client)
    }
  })
})

describe('resolveAuthRule', () => {
  it.each([true, 'required', 'protected'])('%j → required', (value) => {
    expect(resolveAuthRule(value)).toBe('required')
  })

  it.each([false, 'public', 'skip'])('%j → public', (value) => {
    expect(resolveAuthRule(value)).toBe('public')
  })

  it.each([undefined, null, 'other', 'Required', 'true', 1, 0, ''])('%j → undefined', (value) => {
    expect(resolveAuthRule(value)).toBeUndefined()
  })

  it('\'guest\' is page meta only: as a route rule it is no rule', () => {
    expect(resolveAuthRule('guest')).toBeUndefined()
  })

  it('objects and arrays → required (an access rule, checked further; anything unknown fails closed)', () => {
    expect(resolveAuthRule({ permission: 'project:write' })).toBe('required')
    expect(resolveAuthRule({})).toBe('required')
    expect(resolveAuthRule(['required'])).toBe('required')
    expect(resolveAuthRule({ auth: true })).toBe('required')
  })
})

describe('parseBearer', () => {
  it.each<[string, string]>([
    ['Bearer abc.def.ghi', 'abc.def.ghi'],
    ['bearer abc.def.ghi', 'abc.def.ghi'],
    ['BEARER abc.def.ghi', 'abc.def.ghi'],
    ['BeArEr abc.def.ghi', 'abc.def.ghi'],
    ['Bearer    abc.def.ghi', 'abc.def.ghi'],
    ['Bearer abc.def.ghi   ', 'abc.def.ghi'],
    ['Bearer\tabc.def.ghi', 'abc.def.ghi'],
    ['Bearer eyJ-_a.b~+/c==', 'eyJ-_a.b~+/c=='],
  ])('%j → %j', (header, token) => {
    expect(parseBearer(header)).toBe(token)
  })

  it.each([
    'Basic x',
    'Basic dXNlcjpwYXNz',
    'Bearer',
    'Bearer ',
    'Bearer    ',
    'Bearer abc def',
    'Bearer abc.def.ghi xyz.uvw.rst',
    'Bearerabc',
    'Token abc',
    'abc.def.ghi',
    'Bearer abc\ndef',
    'Bearer a"b',
    'Bearer =abc',
  ])('%j → undefined', (header) => {
    expect(parseBearer(header)).toBeUndefined()
  })

  it.each([undefined, null, ''])('%j → undefined', (header) => {
    expect(parseBearer(header)).toBeUndefined()
  })

  it('bearerCandidate takes the text after the scheme unchecked (cache lookups only); parseBearer checks it', () => {
    expect(bearerCandidate('bearer \t abc def \t')).toBe('abc def')
    expect(parseBearer('bearer \t abc def \t')).toBeUndefined()
    for (const header of ['Bearer', 'Bearer    ', 'Bearerabc', 'Basic abc', undefined]) expect(bearerCandidate(header)).toBeUndefined()
  })
})

describe('createKeyHasher', () => {
  it('is deterministic for one secret', () => {
    expect(createKeyHasher(SECRET).hash('rt', 'value')).toBe(createKeyHasher(SECRET).hash('rt', 'value'))
  })

  it('differs per purpose, per value and per secret', () => {
    const hasher = createKeyHasher(SECRET)
    const base = hasher.hash('rt', 'value')
    expect(hasher.hash('code', 'value')).not.toBe(base)
    expect(hasher.hash('rt', 'value2')).not.toBe(base)
    expect(createKeyHasher(OTHER_SECRET).hash('rt', 'value')).not.toBe(base)
    // The separator keeps purpose and value apart.
    expect(hasher.hash('ab', 'c')).not.toBe(hasher.hash('a', 'bc'))
  })

  it('outputs 64 hex characters that do not contain the input', () => {
    const hasher = createKeyHasher(SECRET)
    for (const value of ['123456', randomToken(32), 'user@example.com', '']) {
      const hash = hasher.hash('magic-code', value)
      expect(hash).toMatch(/^[0-9a-f]{64}$/)
      if (value) expect(hash).not.toContain(value)
    }
  })

  it('is not a plain SHA-256 of a code, so a 6-digit code cannot be recovered by hashing all codes', () => {
    const hasher = createKeyHasher(SECRET)
    for (const code of ['000000', '123456', '999999']) {
      const hash = hasher.hash('magic-code', code)
      expect(hash).not.toBe(sha256(code))
      expect(hash).not.toBe(sha256(`magic-code${code}`))
      expect(hash).not.toBe(sha256(`magic-code\0${code}`))
      expect(hash).not.toBe(sha256(`magic-code:${code}`))
    }
  })

  it('deriveKey is HKDF-SHA256 with an empty salt, as hkdfSync computes it, for every length', () => {
    const secrets = ['', 'a', SECRET, 'x'.repeat(200), 'é 東京 \uD83D\uDE00 \uD800']
    const infos = ['', 'nuxt-svc-auth:record-encryption', 'ü', 'i'.repeat(300)]
    for (const secret of secrets) {
      for (const info of infos) {
        for (const length of [1, 16, 31, 32, 33, 64]) {
          const expected = Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), info, length))
          expect(deriveKey(secret, info, length).equals(expected)).toBe(true)
        }
      }
    }
  })

  it('deriveKey is bound to its info string', () => {
    expect(deriveKey(SECRET, 'a').equals(deriveKey(SECRET, 'a'))).toBe(true)
    expect(deriveKey(SECRET, 'a').equals(deriveKey(SECRET, 'b'))).toBe(false)
    expect(deriveKey(SECRET, 'a')).toHaveLength(32)
  })
})

describe('createSealer', () => {
  const sealer = createSealer(KEY)

  it('round-trips UTF-8 text', () => {
    for (const text of ['', 'hello', '{"email":"zoë@example.com","name":"Zoë Åländ 東京 🚀"}', 'x'.repeat(10_000)]) {
      expect(sealer.open(sealer.seal(text))).toBe(text)
    }
  })

  it('a second sealer with the same key opens the values', () => {
    expect(createSealer(KEY).open(sealer.seal('shared'))).toBe('shared')
  })

  it('produces a different ciphertext for the same plaintext each time', () => {
    const seen = new Set(Array.from({ length: 20 }, () => sealer.seal('same plaintext')))
    expect(seen.size).toBe(20)
  })

  it('has the v1.<iv>.<tag>.<data> form and does not contain the plaintext', () => {
    const plaintext = 'user@example.com secret-marker'
    const sealed = sealer.seal(plaintext)
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/)
    const [, iv, tag] = sealed.split('.')
    expect(Buffer.from(iv!, 'base64url')).toHaveLength(12)
    expect(Buffer.from(tag!, 'base64url')).toHaveLength(16)
    expect(sealed).not.toContain('user@example.com')
    expect(sealed).not.toContain('secret-marker')
    expect(sealed).not.toContain(Buffer.from(plaintext).toString('base64url'))
  })

  it('open with another key returns null', () => {
    expect(createSealer(OTHER_KEY).open(sealer.seal('hello'))).toBeNull()
  })

  it('tampered values return null', () => {
    const sealed = sealer.seal('{"userId":"u1","role":"user"}')
    const [v, iv, tag, data] = sealed.split('.') as [string, string, string, string]
    expect(sealer.open([v, iv, tag, flipChar(data, 0)].join('.'))).toBeNull()
    expect(sealer.open([v, iv, tag, flipChar(data, data.length - 2)].join('.'))).toBeNull()
    expect(sealer.open([v, iv, flipChar(tag, 0), data].join('.'))).toBeNull()
    expect(sealer.open([v, flipChar(iv, 0), tag, data].join('.'))).toBeNull()
    expect(sealer.open([v, iv, tag, data.slice(0, -4)].join('.'))).toBeNull()
    expect(sealer.open([v, iv, tag, `${data}AAAA`].join('.'))).toBeNull()
    expect(sealer.open(['v2', iv, tag, data].join('.'))).toBeNull()
    expect(sealer.open([v, iv, '', data].join('.'))).toBeNull()
    expect(sealer.open([v, '', tag, data].join('.'))).toBeNull()
    expect(sealer.open(`${sealed}.extra`)).toBeNull()
  })

  it('a truncated authentication tag is refused', () => {
    const sealed = sealer.seal('hello')
    const [v, iv, tag, data] = sealed.split('.') as [string, string, string, string]
    for (const length of [4, 8, 12, 15]) {
      const short = Buffer.from(tag, 'base64url').subarray(0, length).toString('base64url')
      expect(sealer.open([v, iv, short, data].join('.'))).toBeNull()
    }
  })

  it('plaintext input returns null', () => {
    for (const text of ['{"userId":"u1"}', 'hello', '', 'a.b.c.d', '"v1"']) expect(sealer.open(text)).toBeNull()
  })
})

describe('plainSealer', () => {
  it('passes values through unchanged', () => {
    expect(plainSealer.seal('{"a":1}')).toBe('{"a":1}')
    expect(plainSealer.open('{"a":1}')).toBe('{"a":1}')
    expect(plainSealer.open(plainSealer.seal('Zoë 東京'))).toBe('Zoë 東京')
  })

  it('does not return sealed values as if they were plaintext', () => {
    expect(plainSealer.open(createSealer(KEY).seal('{"a":1}'))).toBeNull()
  })
})

describe('randomDigits and randomToken', () => {
  it('always gives 6 digits, leading zeros included', () => {
    let leadingZero = 0
    const seen = new Set<string>()
    for (let i = 0; i < 2000; i++) {
      const code = randomDigits()
      expect(code).toMatch(/^\d{6}$/)
      if (code.startsWith('0')) leadingZero++
      seen.add(code)
    }
    expect(leadingZero).toBeGreaterThan(0)
    // 2000 draws out of a million values: a handful of repeats at most.
    expect(seen.size).toBeGreaterThan(1980)
  })

  it('honours another length', () => {
    expect(randomDigits(8)).toMatch(/^\d{8}$/)
  })

  it('randomBelow draws every value of its range, none outside, with even odds', () => {
    const counts = Array<number>(10).fill(0)
    for (let i = 0; i < 20_000; i++) counts[randomBelow(10)]!++
    // 2000 expected per value; 5 standard deviations (about 212) either side.
    for (const count of counts) expect(count).toBeGreaterThan(1780)
    for (const count of counts) expect(count).toBeLessThan(2220)
    expect(randomBelow(1)).toBe(0)
    expect(randomBelow(2 ** 32)).toBeLessThan(2 ** 32)
    for (const bad of [0, -1, 1.5, 2 ** 32 + 1, Number.NaN]) expect(() => randomBelow(bad), String(bad)).toThrow(RangeError)
  })

  it('randomBytes comes from the Web Crypto API (the same on Node and Workers): small values cut from 4 KiB drawn at once', () => {
    const spy = vi.spyOn(globalThis.crypto, 'getRandomValues')
    try {
      // Longer than 256 bytes: a draw of its own.
      expect(randomBytes(1000)).toHaveLength(1000)
      expect(spy).toHaveBeenCalledTimes(1)
      spy.mockClear()
      // 300 values of 16 bytes (4,800 bytes): one or two draws of 4 KiB, every byte handed out once.
      const values = Array.from({ length: 300 }, () => randomBytes(16))
      expect(spy.mock.calls.length).toBeGreaterThanOrEqual(1)
      expect(spy.mock.calls.length).toBeLessThanOrEqual(2)
      for (const [array] of spy.mock.calls) expect((array as Uint8Array).byteLength).toBe(4096)
      for (const value of values) {
        expect(value).toBeInstanceOf(Uint8Array)
        expect(value).toHaveLength(16)
      }
      expect(new Set(values.map(value => Buffer.from(value).toString('hex'))).size).toBe(300)
      // A value is the caller's own copy: later draws never change it.
      const kept = randomBytes(32)
      const copy = Uint8Array.from(kept)
      for (let i = 0; i < 300; i++) randomBytes(32)
      expect(kept).toEqual(copy)
      expect(randomBytes(0)).toHaveLength(0)
      // randomBelow draws on its own: one call per digit.
      spy.mockClear()
      randomDigits(2)
      expect(spy).toHaveBeenCalledTimes(2)
    }
    finally {
      spy.mockRestore()
    }
  })

  it('randomToken is base64url with the requested entropy', () => {
    const token = randomToken(32)
    expect(token).toMatch(/^[\w-]{43}$/)
    expect(Buffer.from(token, 'base64url')).toHaveLength(32)
    expect(randomToken(32)).not.toBe(token)
  })
})

describe('safeEqual', () => {
  it.each<[string, string, boolean]>([
    ['abc', 'abc', true],
    ['', '', true],
    ['東京', '東京', true],
    ['abc', 'abd', false],
    ['abc', 'ab', false],
    ['ab', 'abc', false],
    ['abc', '', false],
    ['abc', 'ABC', false],
  ])('safeEqual(%j, %j) is %s', (a, b, expected) => {
    expect(safeEqual(a, b)).toBe(expected)
  })
})

describe('errors', () => {
  it('authError keeps status, message, code and headers', () => {
    const { body, headers } = toErrorBody(authError('rate_limited', 'Too many attempts', { 'retry-after': '30' }))
    expect(body).toEqual({ statusCode: 429, message: 'Too many attempts', error: 'rate_limited' })
    expect(headers).toEqual({ 'retry-after': '30' })
    expect(toErrorBody(authError('invalid_code', 'Invalid or expired code'))).toEqual({
      body: { statusCode: 401, message: 'Invalid or expired code', error: 'invalid_code' },
      headers: {},
    })
  })

  it('an h3 createError keeps its status and message, with a generic code', () => {
    expect(toErrorBody(createError({ statusCode: 429, statusMessage: 'Slow down' })).body).toEqual({ statusCode: 429, message: 'Slow down', error: 'rate_limited' })
    expect(toErrorBody(createError({ statusCode: 403, message: 'No entry' })).body).toEqual({ statusCode: 403, message: 'No entry', error: 'forbidden' })
    expect(toErrorBody(createError({ statusCode: 404, statusMessage: 'Gone' })).body.error).toBe('not_found')
    expect(toErrorBody(createError({ statusCode: 418, statusMessage: 'Teapot' })).body).toEqual({ statusCode: 418, message: 'Teapot', error: 'bad_request' })
    expect(toErrorBody(createError({ statusCode: 503, statusMessage: 'Maintenance' })).body).toEqual({ statusCode: 503, message: 'Maintenance', error: 'internal_error' })
  })

  it('an unexpected error becomes a generic 500 and is logged on the server only', () => {
    const logged: unknown[][] = []
    const original = new Error('db password xyz')
    const { body, headers } = toErrorBody(original, { error: (...args: unknown[]) => void logged.push(args) })
    expect(body).toEqual({ statusCode: 500, message: 'Internal server error', error: 'internal_error' })
    expect(headers).toEqual({})
    expect(JSON.stringify(body)).not.toContain('db password xyz')
    expect(JSON.stringify(body)).not.toContain('xyz')
    expect(logged).toHaveLength(1)
    expect(logged[0]![1]).toBe(original)
  })

  it('non-error values and unhandled h3 errors are generic too', () => {
    for (const thrown of ['db password xyz', { message: 'db password xyz', statusCode: 401 }, null, undefined]) {
      expect(toErrorBody(thrown).body).toEqual({ statusCode: 500, message: 'Internal server error', error: 'internal_error' })
    }
    const unhandled = createError({ statusCode: 500, message: 'db password xyz', unhandled: true })
    expect(JSON.stringify(toErrorBody(unhandled).body)).not.toContain('db password')
    // A 5xx h3 error wrapping an internal failure is not marked unhandled, yet keeps nothing of it.
    const wrapped = createError(new Error('db password xyz'))
    expect(toErrorBody(wrapped).body).toEqual({ statusCode: 500, message: 'Internal server error', error: 'internal_error' })
    // A 5xx raised on purpose through authError keeps its message.
    expect(toErrorBody(authError('send_failed', 'Try later')).body).toEqual({ statusCode: 500, message: 'Try later', error: 'send_failed' })
  })

  it('sendAuthError writes status and headers on the event', () => {
    const req = new IncomingMessage(new Socket())
    const res = new ServerResponse(req)
    const event = createEvent(req, res)
    const body = sendAuthError(event, authError('rate_limited', 'Slow down', { 'retry-after': '12' }))
    expect(body).toEqual({ statusCode: 429, message: 'Slow down', error: 'rate_limited' })
    expect(res.statusCode).toBe(429)
    expect(res.getHeader('content-type')).toBe('application/json')
    expect(res.getHeader('cache-control')).toBe('no-store')
    expect(res.getHeader('retry-after')).toBe('12')
  })
})

describe('createLogger', () => {
  const levels: Array<Exclude<LogLevel, 'silent'>> = ['error', 'warn', 'info', 'debug']

  it.each<[LogLevel, string[]]>([
    ['silent', []],
    ['error', ['error']],
    ['warn', ['error', 'warn']],
    ['info', ['error', 'warn', 'info']],
    ['debug', ['error', 'warn', 'info', 'debug']],
  ])('level %s writes %j', (level, expected) => {
    const { calls, sink } = fakeSink()
    const logger = createLogger(level, false, sink)
    for (const l of levels) logger[l](`${l} message`)
    expect(calls.map(c => c.method)).toEqual(expected)
    for (const call of calls) expect(call.args).toEqual([`[svc-auth] ${call.method} message`])
  })

  it('passes the detail along when there is one', () => {
    const { calls, sink } = fakeSink()
    const detail = new Error('boom')
    createLogger('info', false, sink).error('Failed', detail)
    expect(calls).toEqual([{ method: 'error', args: ['[svc-auth] Failed', detail] }])
  })

  it('logs security events only when the security flag is on', () => {
    const off = fakeSink()
    createLogger('debug', false, off.sink).security('refresh.reused', { subject: 'u1' })
    expect(off.calls).toEqual([])

    const on = fakeSink()
    const logger = createLogger('error', true, on.sink)
    logger.security('refresh.reused', { subject: 'u1' })
    logger.security('code.refused', {})
    expect(on.calls).toEqual([
      { method: 'warn', args: ['[svc-auth:security] refresh.reused', { subject: 'u1' }] },
      { method: 'warn', args: ['[svc-auth:security] code.refused', {}] },
    ])
  })

  it('silent silences security events too', () => {
    const { calls, sink } = fakeSink()
    createLogger('silent', true, sink).security('refresh.reused', { subject: 'u1' })
    expect(calls).toEqual([])
  })
})
