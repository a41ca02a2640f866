import { createHmac, generateKeyPairSync } from 'node:crypto'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import {
  SignJWT,
  base64url,
  calculateJwkThumbprint,
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  exportPKCS8,
  exportSPKI,
  generateKeyPair,
  importPKCS8,
  jwtVerify,
} from 'jose'
import type { JWTHeaderParameters } from 'jose'
import type { TokenAlgorithm } from '../../src/runtime/types/options'
import { parseDuration } from '../../src/runtime/server/lib/config/duration'
import { ACCESS_TOKEN_TYP, createTokenService } from '../../src/runtime/server/lib/core/tokens'
import type { TokenService, TokenServiceOptions } from '../../src/runtime/server/lib/core/tokens'
import { RESERVED_CLAIMS, buildAccessClaims, sanitizeCustomClaims } from '../../src/runtime/server/lib/core/claims'

const SECRET = 'test-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
const OTHER_SECRET = 'another-secret-0123456789-abcdefghijklmnopqrstuv'
const NON_ASCII_NAME = 'Zoë Åländ 東京'

function hsOptions(overrides: Partial<TokenServiceOptions> = {}): TokenServiceOptions {
  return {
    secret: SECRET,
    algorithm: 'HS256',
    issuer: 'svc',
    audience: '',
    expiresIn: '1h',
    privateKey: '',
    keyId: 'svc-auth',
    ...overrides,
  }
}

function now(): number {
  return Math.floor(Date.now() / 1000)
}

function encodeJson(value: unknown): string {
  return base64url.encode(JSON.stringify(value))
}

/** Claims of a token that the HS256 test service would accept. */
function validClaims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const iat = now()
  return { sub: 'user-1', iss: 'svc', aud: '', iat, exp: iat + 600, jti: 'j-1', ...overrides }
}

/** Sign arbitrary claims and header with a raw HMAC secret, bypassing the service. */
function signHs256(
  claims: Record<string, unknown>,
  header: Partial<JWTHeaderParameters> = {},
  secret: string = SECRET,
): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: ACCESS_TOKEN_TYP, ...header })
    .sign(new TextEncoder().encode(secret))
}

/** Compact HS256 JWS built by hand, for headers that jose refuses to produce. */
function signRawHs256(header: Record<string, unknown>, claims: Record<string, unknown>, secret: string = SECRET): string {
  const input = `${encodeJson(header)}.${encodeJson(claims)}`
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`
}

function replaceSegment(token: string, index: number, segment: string): string {
  const parts = token.split('.')
  parts[index] = segment
  return parts.join('.')
}

function flipCharAt(value: string, index: number): string {
  const replacement = value[index] === 'A' ? 'B' : 'A'
  return value.slice(0, index) + replacement + value.slice(index + 1)
}

let rsaPrivatePem: string
let rsaPublicPem: string
let hs: TokenService
let rs: TokenService

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
  rsaPrivatePem = await exportPKCS8(privateKey)
  rsaPublicPem = await exportSPKI(publicKey)
  hs = await createTokenService(hsOptions())
  rs = await createTokenService(hsOptions({ algorithm: 'RS256', privateKey: rsaPrivatePem, keyId: 'key-1' }))
})

describe('parseDuration', () => {
  it.each([
    ['1h', 3600],
    ['5m', 300],
    [90, 90],
    ['7d', 604_800],
    ['2 weeks', 1_209_600],
    ['30', 30],
    ['90s', 90],
    ['1.5h', 5400],
    [' 10 MIN ', 600],
    ['3hrs', 10_800],
    ['1 day', 86_400],
    ['1w', 604_800],
    ['2 seconds', 2],
    [1.4, 1],
  ] as const)('%j → %d seconds', (input, expected) => {
    expect(parseDuration(input)).toBe(expected)
  })

  it.each(['abc', '', '   ', -1, 0, '1y', '-5m', '0', '0.2s', 'h', '1h30m', '1e3', Number.NaN, Number.POSITIVE_INFINITY, 0.4])(
    'rejects %j',
    (input) => {
      expect(() => parseDuration(input)).toThrow(/^Invalid duration "/)
    },
  )
})

describe('createTokenService: sign and verify', () => {
  it('round-trips HS256 tokens with the default claims and header', async () => {
    const { token, expiresIn, payload } = await hs.sign({ sub: 'user-1', email: 'a@example.com', role: 'admin' })
    expect(expiresIn).toBe(3600)
    expect(payload.iss).toBe('svc')
    expect(payload).toHaveProperty('aud', '')
    expect(payload.exp! - payload.iat!).toBe(3600)
    expect(typeof payload.jti).toBe('string')

    const header = decodeProtectedHeader(token)
    expect(header).toEqual({ alg: 'HS256', typ: 'at+jwt' })

    const verified = await hs.verify(token)
    expect(verified).toEqual(payload)
    expect(verified).toMatchObject({ sub: 'user-1', email: 'a@example.com', role: 'admin', iss: 'svc', aud: '' })
    expect(hs.jwks()).toBeNull()
  })

  it('round-trips RS256 tokens with a kid header', async () => {
    const { token, payload } = await rs.sign({ sub: 'user-2' })
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'RS256', typ: 'at+jwt', kid: 'key-1' })
    expect(await rs.verify(token)).toEqual(payload)
  })

  it('ignores reserved claims passed in and drops undefined values', async () => {
    const past = now() - 10_000
    const { token, payload } = await hs.sign({
      sub: 'user-1',
      iss: 'evil',
      aud: 'evil',
      iat: past,
      exp: past + 1,
      nbf: past,
      jti: 'fixed',
      nickname: undefined,
    })
    expect(payload.iss).toBe('svc')
    expect(payload.aud).toBe('')
    expect(payload.iat).toBeGreaterThan(past)
    expect(payload.jti).not.toBe('fixed')
    expect(payload).not.toHaveProperty('nbf')
    expect(payload).not.toHaveProperty('nickname')
    expect(await hs.verify(token)).not.toBeNull()
  })

  it('uses a per-call expiresIn and a fresh jti each time', async () => {
    const a = await hs.sign({ sub: 'u' }, { expiresIn: '5m' })
    const b = await hs.sign({ sub: 'u' }, { expiresIn: 90 })
    expect(a.expiresIn).toBe(300)
    expect(a.payload.exp! - a.payload.iat!).toBe(300)
    expect(b.expiresIn).toBe(90)
    expect(a.payload.jti).not.toBe(b.payload.jti)
  })

  it('refuses to sign without a subject', async () => {
    await expect(hs.sign({ email: 'a@example.com' })).rejects.toThrow(/sub/)
    await expect(hs.sign({ sub: '' })).rejects.toThrow(/sub/)
  })

  it('carries a configured audience', async () => {
    const api = await createTokenService(hsOptions({ audience: 'api' }))
    const { token, payload } = await api.sign({ sub: 'u' })
    expect(payload.aud).toBe('api')
    expect(await api.verify(token)).not.toBeNull()
  })

  it('round-trips non-ASCII claims', async () => {
    for (const service of [hs, rs]) {
      const { token } = await service.sign({ sub: 'user-ü', name: NON_ASCII_NAME })
      expect((await service.verify(token))?.name).toBe(NON_ASCII_NAME)
      expect(decodeJwt(token).name).toBe(NON_ASCII_NAME)
      expect(decodeJwt(token).sub).toBe('user-ü')
    }
  })
})

describe('createTokenService: HS256 tokens are what jose signs', () => {
  it('gives the very bytes of jose SignJWT for the same header, claims and secret', async () => {
    const key = new TextEncoder().encode(SECRET)
    const claimSets = [
      { sub: 'user-1' },
      { sub: 'user-ü', name: NON_ASCII_NAME, email: 'a@example.com', roles: ['a', 'b'], org: { id: 7, name: 'Ø', tags: ['x'] }, flag: false, none: null },
      { sub: 'lone \uD800 surrogate', quote: '"\\</script>', n: 1.5e-7 },
    ]
    for (const claims of claimSets) {
      for (const expiresIn of [undefined, 90, '7d'] as const) {
        const { token, payload } = await hs.sign(claims, { expiresIn })
        const header: JWTHeaderParameters = { alg: 'HS256', typ: ACCESS_TOKEN_TYP }
        expect(token).toBe(await new SignJWT(payload).setProtectedHeader(header).sign(key))
      }
    }
  })
})

describe('createTokenService: forged and invalid tokens verify to null', () => {
  it('accepts the hand-crafted control token (so the cases below test one change each)', async () => {
    expect(await hs.verify(await signHs256(validClaims()))).not.toBeNull()
  })

  it('alg none', async () => {
    const header = encodeJson({ alg: 'none', typ: 'at+jwt' })
    expect(await hs.verify(`${header}.${encodeJson(validClaims())}.`)).toBeNull()
    const rsClaims = encodeJson(validClaims())
    expect(await rs.verify(`${header}.${rsClaims}.`)).toBeNull()
  })

  it('HS256 token signed with the RSA public key PEM, presented to the RS256 service', async () => {
    const token = await signHs256(validClaims(), {}, rsaPublicPem)
    expect(await rs.verify(token)).toBeNull()
  })

  it('RS256 token presented to the HS256 service', async () => {
    const { token } = await rs.sign({ sub: 'user-1' })
    expect(await hs.verify(token)).toBeNull()
  })

  it('HS256 token presented to the RS256 service', async () => {
    const { token } = await hs.sign({ sub: 'user-1' })
    expect(await rs.verify(token)).toBeNull()
  })

  it('wrong issuer', async () => {
    const other = await createTokenService(hsOptions({ issuer: 'other' }))
    expect(await hs.verify((await other.sign({ sub: 'u' })).token)).toBeNull()
    expect(await hs.verify(await signHs256(validClaims({ iss: 'other' })))).toBeNull()
    expect(await hs.verify(await signHs256(validClaims({ iss: undefined })))).toBeNull()
  })

  it('wrong audience', async () => {
    const api = await createTokenService(hsOptions({ audience: 'api' }))
    expect(await hs.verify((await api.sign({ sub: 'u' })).token)).toBeNull()
    expect(await api.verify((await hs.sign({ sub: 'u' })).token)).toBeNull()
    expect(await hs.verify(await signHs256(validClaims({ aud: undefined })))).toBeNull()
    expect(await hs.verify(await signHs256(validClaims({ aud: ['api'] })))).toBeNull()
    expect(await hs.verify(await signHs256(validClaims({ aud: ['api', ''] })))).not.toBeNull()
  })

  it('expired', async () => {
    const iat = now() - 3600
    expect(await hs.verify(await signHs256(validClaims({ iat, exp: iat + 60 })))).toBeNull()
  })

  it('not yet valid (nbf in the future)', async () => {
    expect(await hs.verify(await signHs256(validClaims({ nbf: now() + 600 })))).toBeNull()
  })

  it('altered payload', async () => {
    const { token } = await hs.sign({ sub: 'user-1', role: 'user' })
    const [, payload] = token.split('.')
    expect(await hs.verify(replaceSegment(token, 1, flipCharAt(payload!, Math.floor(payload!.length / 2))))).toBeNull()

    const elevated = { ...decodeJwt(token), role: 'admin' }
    expect(await hs.verify(replaceSegment(token, 1, encodeJson(elevated)))).toBeNull()
  })

  it('truncated', async () => {
    const { token } = await hs.sign({ sub: 'user-1' })
    expect(await hs.verify(token.slice(0, -5))).toBeNull()
    expect(await hs.verify(token.slice(0, token.lastIndexOf('.')))).toBeNull()
    expect(await hs.verify(token.slice(0, token.lastIndexOf('.') + 1))).toBeNull()
  })

  it('signed with another secret', async () => {
    const other = await createTokenService(hsOptions({ secret: OTHER_SECRET }))
    expect(await hs.verify((await other.sign({ sub: 'u' })).token)).toBeNull()
    expect(await hs.verify(await signHs256(validClaims(), {}, OTHER_SECRET))).toBeNull()
  })

  it('another RSA key', async () => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true })
    const other = await createTokenService(hsOptions({ algorithm: 'RS256', privateKey: await exportPKCS8(privateKey), keyId: 'key-1' }))
    expect(await rs.verify((await other.sign({ sub: 'u' })).token)).toBeNull()
  })

  it('a JWT of another type signed with the right key', async () => {
    expect(await hs.verify(await signHs256(validClaims(), { typ: 'JWT' }))).toBeNull()
    const noTyp = await new SignJWT(validClaims()).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(SECRET))
    expect(await hs.verify(noTyp)).toBeNull()
  })

  it('headers that point at other keys, even with a valid signature', async () => {
    const cases: Record<string, unknown>[] = [
      { kid: 'attacker-key', jku: 'http://127.0.0.1:9/jwks.json' },
      { x5u: 'http://127.0.0.1:9/cert.pem' },
      { jwk: { kty: 'oct', k: 'AAAA' } },
      // jose itself accepts `crit: ['b64']` with `b64: true`; the service refuses any `crit`.
      { crit: ['b64'], b64: true },
    ]
    for (const extra of cases) {
      const header = { alg: 'HS256', typ: ACCESS_TOKEN_TYP, ...extra }
      const token = signRawHs256(header, validClaims())
      await expect(jwtVerify(token, new TextEncoder().encode(SECRET), { algorithms: ['HS256'] })).resolves.toBeDefined()
      expect(await hs.verify(token), JSON.stringify(extra)).toBeNull()
    }
  })

  it('accepts the hand-signed control token without such headers', async () => {
    expect(await hs.verify(signRawHs256({ alg: 'HS256', typ: ACCESS_TOKEN_TYP }, validClaims()))).not.toBeNull()
  })

  it('ignores a foreign kid for key selection (RS256)', async () => {
    const { token } = await rs.sign({ sub: 'user-1' })
    const header = encodeJson({ ...decodeProtectedHeader(token), kid: 'elsewhere' })
    // The header is part of the signed input, so changing kid breaks the signature.
    expect(await rs.verify(replaceSegment(token, 0, header))).toBeNull()
  })

  it('missing or empty subject', async () => {
    expect(await hs.verify(await signHs256(validClaims({ sub: undefined })))).toBeNull()
    expect(await hs.verify(await signHs256(validClaims({ sub: '' })))).toBeNull()
  })

  it('missing exp or iat', async () => {
    expect(await hs.verify(await signHs256(validClaims({ exp: undefined })))).toBeNull()
    expect(await hs.verify(await signHs256(validClaims({ iat: undefined })))).toBeNull()
  })

  it.each(['', 'a.b.c', 'not a token', '...', 'a.b', 'a.b.c.d.e'])('garbage %j', async (input) => {
    expect(await hs.verify(input)).toBeNull()
    expect(await rs.verify(input)).toBeNull()
  })

  it('non-string input', async () => {
    expect(await hs.verify(undefined as unknown as string)).toBeNull()
    expect(await hs.verify(42 as unknown as string)).toBeNull()
  })
})

describe('createTokenService: JWKS', () => {
  it('publishes only the public RSA parameters', () => {
    const jwks = rs.jwks()
    expect(jwks?.keys).toHaveLength(1)
    const [key] = jwks!.keys
    expect(Object.keys(key!).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use'])
    for (const privatePart of ['d', 'p', 'q', 'dp', 'dq', 'qi']) {
      expect(key).not.toHaveProperty(privatePart)
    }
    expect(key).toMatchObject({ kty: 'RSA', kid: 'key-1', alg: 'RS256', use: 'sig' })
  })

  it('verifies tokens through jose createLocalJWKSet', async () => {
    const { token } = await rs.sign({ sub: 'user-1' })
    const { payload } = await jwtVerify(token, createLocalJWKSet(rs.jwks()!), {
      algorithms: ['RS256'],
      issuer: 'svc',
      typ: ACCESS_TOKEN_TYP,
    })
    expect(payload.sub).toBe('user-1')
  })

  it('returns a copy', () => {
    rs.jwks()!.keys[0]!.n = 'tampered'
    expect(rs.jwks()!.keys[0]!.n).not.toBe('tampered')
  })

  it('is null for HS256', () => {
    expect(hs.jwks()).toBeNull()
  })
})

describe('createTokenService: configuration errors', () => {
  it('rejects a short HS256 secret', async () => {
    await expect(createTokenService(hsOptions({ secret: 'short' }))).rejects.toThrow(/at least 32 bytes/)
    await expect(createTokenService(hsOptions({ secret: 'x'.repeat(31) }))).rejects.toThrow(/at least 32 bytes/)
    await expect(createTokenService(hsOptions({ secret: '' }))).rejects.toThrow(/at least 32 bytes/)
  })

  it('counts the secret in UTF-8 bytes', async () => {
    await expect(createTokenService(hsOptions({ secret: 'é'.repeat(16) }))).resolves.toBeDefined()
  })

  it('rejects RS256 without a private key', async () => {
    await expect(createTokenService(hsOptions({ algorithm: 'RS256', privateKey: '' }))).rejects.toThrow(/privateKey/)
  })

  it('rejects an unparsable private key', async () => {
    await expect(createTokenService(hsOptions({ algorithm: 'RS256', privateKey: 'garbage' }))).rejects.toThrow(/PKCS#8/)
    await expect(createTokenService(hsOptions({ algorithm: 'RS256', privateKey: rsaPublicPem }))).rejects.toThrow(/PKCS#8/)
  })

  it('rejects RSA keys shorter than 2048 bits', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 })
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()
    await expect(createTokenService(hsOptions({ algorithm: 'RS256', privateKey: pem })))
      .rejects.toThrow(/2048/)
  })

  it('accepts a PEM with escaped newlines (as from an environment variable)', async () => {
    const escaped = rsaPrivatePem.replace(/\n/g, '\\n')
    const service = await createTokenService(hsOptions({ algorithm: 'RS256', privateKey: escaped, keyId: 'key-1' }))
    expect(await rs.verify((await service.sign({ sub: 'u' })).token)).not.toBeNull()
  })

  it('rejects unsupported algorithms', async () => {
    await expect(createTokenService(hsOptions({ algorithm: 'ES256' as unknown as TokenAlgorithm }))).rejects.toThrow(/unsupported/)
    await expect(createTokenService(hsOptions({ algorithm: 'none' as unknown as TokenAlgorithm }))).rejects.toThrow(/unsupported/)
  })

  it('rejects an invalid expiresIn', async () => {
    await expect(createTokenService(hsOptions({ expiresIn: '1y' }))).rejects.toThrow(/Invalid duration/)
  })
})

describe('createTokenService: dev payload size warning', () => {
  /** Claims whose signed payload JSON is exactly `bytes` long. */
  async function claimsOfSize(service: TokenService, bytes: number): Promise<Record<string, unknown>> {
    const probe = await service.sign({ sub: 'u', pad: '' })
    const overhead = new TextEncoder().encode(JSON.stringify(probe.payload)).byteLength
    return { sub: 'u', pad: 'x'.repeat(bytes - overhead) }
  }

  async function warningsFor(bytes: number, dev: boolean): Promise<string[]> {
    const warn = vi.fn<(msg: string) => void>()
    const service = await createTokenService(hsOptions(), { warn }, dev)
    const claims = await claimsOfSize(service, bytes)
    const { payload } = await service.sign(claims)
    expect(new TextEncoder().encode(JSON.stringify(payload)).byteLength).toBe(bytes)
    return warn.mock.calls.map(([msg]) => msg)
  }

  it('warns once above 1024 bytes in dev, with the size', async () => {
    const warnings = await warningsFor(1025, true)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('1025')
  })

  it('stays quiet at exactly 1024 bytes', async () => {
    expect(await warningsFor(1024, true)).toEqual([])
  })

  it('stays quiet outside dev', async () => {
    expect(await warningsFor(4000, false)).toEqual([])
  })
})

describe('sanitizeCustomClaims', () => {
  it('keeps primitives, primitive arrays and one-level objects', () => {
    const input = {
      role: 'admin',
      level: 3,
      active: true,
      nothing: null,
      tags: ['a', 1, false, null],
      empty: [],
      org: { id: 'o1', seats: 5, features: ['x', 'y'], owner: null },
      name: 'kept by sanitize, ignored by buildAccessClaims',
    }
    const dropped: string[] = []
    expect(sanitizeCustomClaims(input, key => dropped.push(key))).toEqual(input)
    expect(dropped).toEqual([])
  })

  it('drops reserved claims and unsupported values, reporting each', () => {
    const onDrop = vi.fn<(key: string, reason: string) => void>()
    const reserved = Object.fromEntries(RESERVED_CLAIMS.map(claim => [claim, 'x']))
    const input: Record<string, unknown> = {
      ...reserved,
      fn: () => 1,
      undef: undefined,
      date: new Date(0),
      deep: { a: { b: 1 } },
      deepArray: { a: [{ b: 1 }] },
      nestedArray: [[1]],
      objectArray: [{ a: 1 }],
      nan: Number.NaN,
      inf: Number.POSITIVE_INFINITY,
      big: 10n,
      sym: Symbol('s'),
      map: new Map(),
      sparse: Array.from({ length: 2 }),
      keep: 'ok',
    }
    expect(sanitizeCustomClaims(input, onDrop)).toEqual({ keep: 'ok' })
    const droppedKeys = onDrop.mock.calls.map(([key]) => key)
    expect(droppedKeys.sort()).toEqual(Object.keys(input).filter(key => key !== 'keep').sort())
    for (const [, reason] of onDrop.mock.calls) {
      expect(reason).toEqual(expect.any(String))
    }
    expect(onDrop).toHaveBeenCalledWith('iss', 'reserved claim')
  })

  it('drops prototype-polluting keys', () => {
    const input: unknown = JSON.parse('{"__proto__": {"admin": true}, "ok": 1, "obj": {"__proto__": 1}}')
    const result = sanitizeCustomClaims(input)
    expect(result).toEqual({ ok: 1 })
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype)
    expect(({} as Record<string, unknown>).admin).toBeUndefined()
  })

  it('returns {} for non-object input', () => {
    for (const input of [null, undefined, 'x', 1, true, ['a'], () => ({ a: 1 })]) {
      expect(sanitizeCustomClaims(input)).toEqual({})
    }
  })

  it('copies values instead of sharing them', () => {
    const tags = ['a']
    const result = sanitizeCustomClaims({ tags })
    tags.push('b')
    expect(result.tags).toEqual(['a'])
  })
})

describe('buildAccessClaims', () => {
  it('lets the identity claims win over custom claims', () => {
    const claims = buildAccessClaims(
      { sub: 'user-1', email: 'real@example.com', name: 'Real', picture: 'https://img/real.png' },
      'github',
      { sub: 'admin', email: 'evil@example.com', name: 'Evil', provider: 'evil', role: 'editor' },
      { sid: 'session-1' },
    )
    expect(claims).toEqual({
      role: 'editor',
      sub: 'user-1',
      email: 'real@example.com',
      name: 'Real',
      picture: 'https://img/real.png',
      provider: 'github',
      sid: 'session-1',
    })
  })

  it('never takes identity or session claims from custom claims', () => {
    const claims = buildAccessClaims({ id: 'user-2' }, undefined, {
      email: 'evil@example.com',
      sid: 'forged',
      impersonation: 'forged',
      iss: 'evil',
      team: 'blue',
    })
    expect(claims).toEqual({ sub: 'user-2', team: 'blue' })
  })

  it('uses id when sub is missing and includes impersonation', () => {
    const impersonation = { originalUserSub: 'admin-1', originalUserLookupId: 'admin-1', impersonatedAt: '2024-01-01T00:00:00.000Z' }
    const claims = buildAccessClaims({ id: 'user-3', email: 'u@example.com' }, 'password', {}, { impersonation })
    expect(claims).toEqual({ sub: 'user-3', email: 'u@example.com', provider: 'password', impersonation })
  })

  it('skips non-string identity fields', () => {
    const user = { sub: 'user-4', email: 5, name: null } as unknown as { sub: string, email?: string, name?: string }
    expect(buildAccessClaims(user, undefined, {})).toEqual({ sub: 'user-4' })
  })

  it('requires sub or id', () => {
    expect(() => buildAccessClaims({ email: 'a@example.com' }, 'github', {})).toThrow(/sub/)
    expect(() => buildAccessClaims({ sub: '', id: '' }, 'github', {})).toThrow(/sub/)
  })

  it('produces claims the token service signs and verifies', async () => {
    const custom = sanitizeCustomClaims({ role: 'admin', org: { id: 'o1' } })
    const claims = buildAccessClaims({ sub: 'user-5', name: NON_ASCII_NAME }, 'google', custom)
    const { token } = await hs.sign(claims)
    expect(await hs.verify(token)).toMatchObject({ sub: 'user-5', name: NON_ASCII_NAME, provider: 'google', role: 'admin', org: { id: 'o1' } })
  })
})

describe('verified-token cache', () => {
  it('answers a repeated token from the cache with an independent copy', async () => {
    const service = await createTokenService(hsOptions())
    const { token } = await service.sign({ sub: 'cached', role: 'admin', org: { id: 'o1' } })
    const first = await service.verify(token)
    expect(first).toMatchObject({ sub: 'cached', role: 'admin' })
    first!.role = 'tampered'
    const second = await service.verify(token)
    expect(second).toMatchObject({ sub: 'cached', role: 'admin', org: { id: 'o1' } })
    expect(() => {
      (second!.org as { id: string }).id = 'other'
    }).toThrow()
  })

  it('re-checks expiry on a cache hit', async () => {
    const service = await createTokenService(hsOptions())
    const { token } = await service.sign({ sub: 'short' }, { expiresIn: 2 })
    expect(await service.verify(token)).not.toBeNull()
    vi.useFakeTimers({ now: Date.now() + 60_000, toFake: ['Date'] })
    try {
      expect(await service.verify(token)).toBeNull()
    }
    finally {
      vi.useRealTimers()
    }
  })

  it('never caches a refused token', async () => {
    const service = await createTokenService(hsOptions())
    const { token } = await service.sign({ sub: 'x' })
    // A character in the middle of the signature: every bit of it counts (the last one carries padding bits).
    const at = token.length - 10
    const forged = `${token.slice(0, at)}${token[at] === 'A' ? 'B' : 'A'}${token.slice(at + 1)}`
    expect(await service.verify(forged)).toBeNull()
    expect(await service.verify(forged)).toBeNull()
    expect(await service.verify(token)).not.toBeNull()
  })

  it('answers only the very token it verified: another payload under a cached signature is verified, and refused', async () => {
    const service = await createTokenService(hsOptions())
    const { token } = await service.sign({ sub: 'alice' })
    expect(await service.verify(token)).toMatchObject({ sub: 'alice' })
    expect(service.verifyCached(token)).toMatchObject({ sub: 'alice' })
    const [header, payload, signature] = token.split('.') as [string, string, string]
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: 'admin' })).toString('base64url')}.${signature}`
    expect(service.verifyCached(forged)).toBeUndefined()
    expect(await service.verify(forged)).toBeNull()
    expect(service.verifyCached(token)).toMatchObject({ sub: 'alice' })
  })
})

describe('HS256 secret rotation', () => {
  const OLD = 'old-secret-0123456789-abcdefghijklmnopqrs'
  const NEW = 'new-secret-0123456789-abcdefghijklmnopqrs'

  it('tokens signed with a previous secret verify until it is removed; new tokens use the new secret', async () => {
    const before = await createTokenService(hsOptions({ secret: OLD }))
    const { token: old } = await before.sign({ sub: 'u1' })
    const rotated = await createTokenService(hsOptions({ secret: NEW, previousSecrets: [OLD] }))
    expect((await rotated.verify(old))?.sub).toBe('u1')
    const { token: fresh } = await rotated.sign({ sub: 'u2' })
    expect((await (await createTokenService(hsOptions({ secret: NEW }))).verify(fresh))?.sub).toBe('u2')
    expect(await before.verify(fresh)).toBeNull()
    const done = await createTokenService(hsOptions({ secret: NEW }))
    expect(await done.verify(old)).toBeNull()
  })

  it('a previous secret never lifts another check (expiry, audience) and must be 32 bytes', async () => {
    const before = await createTokenService(hsOptions({ secret: OLD, audience: 'other' }))
    const { token } = await before.sign({ sub: 'u1' })
    const rotated = await createTokenService(hsOptions({ secret: NEW, previousSecrets: [OLD] }))
    expect(await rotated.verify(token)).toBeNull()
    await expect(createTokenService(hsOptions({ secret: NEW, previousSecrets: ['short'] }))).rejects.toThrow(/token.previousSecrets must be at least 32 bytes/)
  })
})

describe('RS256 key rotation', () => {
  let next: { privatePem: string, publicPem: string }
  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
    next = { privatePem: await exportPKCS8(privateKey), publicPem: await exportSPKI(publicKey) }
  })
  const rsOptions = (overrides: Partial<TokenServiceOptions>) => hsOptions({ algorithm: 'RS256', ...overrides })

  it('the current key signs; tokens of a previous key verify by their kid until it is removed', async () => {
    const { token: old } = await rs.sign({ sub: 'u1' })
    const rotated = await createTokenService(rsOptions({ privateKey: next.privatePem, keyId: 'key-2', previousKeys: [{ keyId: 'key-1', key: rsaPublicPem }] }))
    expect((await rotated.verify(old))?.sub).toBe('u1')
    const { token: fresh } = await rotated.sign({ sub: 'u2' })
    expect(decodeProtectedHeader(fresh).kid).toBe('key-2')
    expect(await rs.verify(fresh)).toBeNull()
    const done = await createTokenService(rsOptions({ privateKey: next.privatePem, keyId: 'key-2' }))
    expect(await done.verify(old)).toBeNull()
    expect((await done.verify(fresh))?.sub).toBe('u2')
  })

  it('publishes every configured public key, each with its kid and nothing private', async () => {
    const service = await createTokenService(rsOptions({ privateKey: next.privatePem, keyId: 'key-2', previousKeys: [{ keyId: 'key-1', key: rsaPrivatePem }] }))
    const keys = service.jwks()!.keys
    expect(keys.map(k => k.kid)).toEqual(['key-2', 'key-1'])
    for (const key of keys) expect(Object.keys(key).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use'])
    const { token } = await service.sign({ sub: 'u1' })
    const { payload } = await jwtVerify(token, createLocalJWKSet(service.jwks()!), { issuer: 'svc', audience: '' })
    expect(payload.sub).toBe('u1')
  })

  it('a kid selects only among configured keys: unknown kids, a kid naming another key, no kid for an old key', async () => {
    const service = await createTokenService(rsOptions({ privateKey: next.privatePem, keyId: 'key-2', previousKeys: [{ keyId: 'key-1', key: rsaPublicPem }] }))
    const signWith = (pem: string, kid: string | undefined) => importPKCS8(pem, 'RS256').then(key =>
      new SignJWT({ sub: 'x', iss: 'svc', aud: '' }).setProtectedHeader({ alg: 'RS256', typ: ACCESS_TOKEN_TYP, ...(kid ? { kid } : {}) }).setIssuedAt().setExpirationTime('5m').sign(key))
    // Signed with key 1 but claiming to be key 2: checked with key 2, refused.
    expect(await service.verify(await signWith(rsaPrivatePem, 'key-2'))).toBeNull()
    expect(await service.verify(await signWith(rsaPrivatePem, 'elsewhere'))).toBeNull()
    // Without kid only the current key verifies.
    expect(await service.verify(await signWith(rsaPrivatePem, undefined))).toBeNull()
    expect((await service.verify(await signWith(next.privatePem, undefined)))?.sub).toBe('x')
    // An unconfigured key with a configured kid.
    const { privateKey: stranger } = await generateKeyPair('RS256', { extractable: true })
    expect(await service.verify(await signWith(await exportPKCS8(stranger), 'key-1'))).toBeNull()
  })

  it('a key id used twice, or a previous key that is not an RSA PEM, is a configuration error; an empty keyId is the thumbprint', async () => {
    await expect(createTokenService(rsOptions({ privateKey: next.privatePem, keyId: 'same', previousKeys: [{ keyId: 'same', key: rsaPublicPem }] }))).rejects.toThrow(/key id "same" is used by two keys/)
    await expect(createTokenService(rsOptions({ privateKey: next.privatePem, previousKeys: [{ keyId: 'k', key: 'not a pem' }] }))).rejects.toThrow(/previousKeys\[0\]\.key is not a PEM RSA key/)
    const service = await createTokenService(rsOptions({ privateKey: next.privatePem, keyId: '', previousKeys: [{ key: rsaPublicPem }] }))
    const [current, previous] = service.jwks()!.keys
    expect(current!.kid).toBe(await calculateJwkThumbprint({ kty: current!.kty!, n: current!.n!, e: current!.e! }))
    expect(previous!.kid).toMatch(/^[\w-]{43}$/)
    expect(decodeProtectedHeader((await service.sign({ sub: 'u' })).token).kid).toBe(current!.kid)
  })
})
