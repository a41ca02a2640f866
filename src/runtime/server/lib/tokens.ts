import { createPublicKey, randomUUID } from 'node:crypto'
import { SignJWT, decodeProtectedHeader, importJWK, importPKCS8, jwtVerify } from 'jose'
import type { CryptoKey, JWK, JWTHeaderParameters, JWTPayload, JWTVerifyOptions } from 'jose'
import type { AuthClaims } from '../../types/auth'
import type { Duration, TokenAlgorithm, TokenOptions } from '../../types/options'
import { parseDuration } from './duration'

/** `typ` header of access tokens (RFC 9068). Verification refuses every other `typ`. */
export const ACCESS_TOKEN_TYP = 'at+jwt'

/**
 * Leeway in seconds for the `exp` and `nbf` checks, to absorb small clock differences between the
 * server that signed a token and the one verifying it.
 */
const CLOCK_TOLERANCE_SECONDS = 5

/** In dev, payloads larger than this (bytes of JSON) trigger a warning: tokens travel in headers. */
const DEV_PAYLOAD_WARN_BYTES = 1024

const MIN_HS256_SECRET_BYTES = 32
const MIN_RSA_MODULUS_BITS = 2048

/** Claims the service always writes itself; values passed in for them are ignored. */
const SERVICE_CLAIMS: ReadonlySet<string> = new Set(['iss', 'aud', 'iat', 'exp', 'nbf', 'jti'])

/** Header parameters that point at other keys. Tokens carrying any of them are refused. */
const FORBIDDEN_HEADER_PARAMETERS = ['jku', 'x5u', 'jwk', 'crit'] as const

const SUPPORTED_ALGORITHMS: readonly TokenAlgorithm[] = ['HS256', 'RS256']

export type TokenServiceOptions = Pick<
  TokenOptions,
  'secret' | 'algorithm' | 'issuer' | 'audience' | 'expiresIn' | 'privateKey' | 'keyId'
>

export interface TokenServiceLogger {
  warn(msg: string): void
}

export interface SignTokenOptions {
  /** Lifetime of this token; defaults to the configured `expiresIn`. */
  expiresIn?: Duration
}

export interface SignedAccessToken {
  token: string
  /** Lifetime in seconds (`exp - iat`). */
  expiresIn: number
  /** The claims exactly as signed. */
  payload: AuthClaims
}

export interface JsonWebKeySet {
  keys: JWK[]
}

export interface TokenService {
  readonly algorithm: TokenAlgorithm
  readonly issuer: string
  readonly audience: string
  /** Sign an access token. `iss`, `aud`, `iat`, `exp`, `nbf` and `jti` in `claims` are ignored. */
  sign(claims: Record<string, unknown>, options?: SignTokenOptions): Promise<SignedAccessToken>
  /** Claims of a valid access token, or null for anything else. Never throws. */
  verify(token: string): Promise<AuthClaims | null>
  /**
   * Claims of a token that already passed `verify` in this process and has not expired since,
   * without waiting (undefined when it must go through `verify`).
   */
  verifyCached(token: string): AuthClaims | undefined
  /** Public keys for RS256 (`/.well-known/jwks.json`), null for HS256. */
  jwks(): JsonWebKeySet | null
}

interface KeyMaterial {
  signingKey: CryptoKey
  verificationKey: CryptoKey
  keyId?: string
  jwks: JsonWebKeySet | null
}

async function importHs256Key(secret: string): Promise<KeyMaterial> {
  const bytes = new TextEncoder().encode(secret ?? '')
  if (bytes.byteLength < MIN_HS256_SECRET_BYTES) {
    throw new Error(
      `svc-auth: token.secret must be at least ${MIN_HS256_SECRET_BYTES} bytes for HS256 (got ${bytes.byteLength})`,
    )
  }
  const key = await crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify'])
  return { signingKey: key, verificationKey: key, jwks: null }
}

/** PEM from an environment variable often arrives with literal `\n`; a PEM never holds a backslash. */
function normalizePem(pem: string): string {
  return pem.replace(/\\n/g, '\n').trim()
}

async function importRs256PrivateKey(pem: string): Promise<CryptoKey> {
  let key: CryptoKey
  try {
    key = await importPKCS8(pem, 'RS256')
  }
  catch (cause) {
    throw new Error(
      'svc-auth: token.privateKey is not a valid PKCS#8 PEM RSA private key (expected "-----BEGIN PRIVATE KEY-----")',
      { cause },
    )
  }
  const { modulusLength } = key.algorithm as { modulusLength?: number }
  if (modulusLength === undefined || modulusLength < MIN_RSA_MODULUS_BITS) {
    throw new Error(`svc-auth: token.privateKey must be an RSA key of at least ${MIN_RSA_MODULUS_BITS} bits (got ${modulusLength})`)
  }
  return key
}

/** Public half of the private key as a JWK holding only `kty`, `n` and `e`. */
function derivePublicJwk(pem: string): JWK {
  const { kty, n, e } = createPublicKey(pem).export({ format: 'jwk' })
  return { kty, n, e }
}

async function importRs256Keys(privateKey: string, keyId: string): Promise<KeyMaterial> {
  if (typeof privateKey !== 'string' || privateKey.trim() === '') {
    throw new Error('svc-auth: token.algorithm RS256 requires token.privateKey (a PKCS#8 PEM RSA private key)')
  }
  const pem = normalizePem(privateKey)
  const signingKey = await importRs256PrivateKey(pem)
  const publicJwk = derivePublicJwk(pem)
  const verificationKey = await importJWK(publicJwk, 'RS256')
  if (verificationKey instanceof Uint8Array) {
    throw new TypeError('svc-auth: unexpected symmetric key derived from token.privateKey')
  }
  const kid = keyId || undefined
  const jwk: JWK = { ...publicJwk, ...(kid ? { kid } : {}), alg: 'RS256', use: 'sig' }
  return { signingKey, verificationKey, keyId: kid, jwks: { keys: [jwk] } }
}

function importKeys(options: TokenServiceOptions): Promise<KeyMaterial> {
  switch (options.algorithm) {
    case 'HS256':
      return importHs256Key(options.secret)
    case 'RS256':
      return importRs256Keys(options.privateKey, options.keyId)
    default:
      throw new Error(
        `svc-auth: unsupported token.algorithm "${String(options.algorithm)}" (supported: ${SUPPORTED_ALGORITHMS.join(', ')})`,
      )
  }
}

/** Copy of `claims` without `undefined` values and without the claims the service owns. */
function userClaims(claims: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(claims ?? {})) {
    if (value !== undefined && !SERVICE_CLAIMS.has(key)) {
      result[key] = value
    }
  }
  return result
}

function hasSubject(payload: JWTPayload): payload is AuthClaims {
  return typeof payload.sub === 'string' && payload.sub !== ''
}

function hasForbiddenHeader(token: string): boolean {
  const header = decodeProtectedHeader(token)
  return FORBIDDEN_HEADER_PARAMETERS.some(name => Object.hasOwn(header, name))
}

/** How many verified tokens one process remembers (oldest forgotten first). */
const VERIFIED_CACHE_SIZE = 5000
/** Longer tokens are verified every time instead of being remembered. */
const VERIFIED_CACHE_MAX_TOKEN_LENGTH = 4096

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner)
    Object.freeze(value)
  }
  return value
}

/**
 * Tokens that passed verification, keyed by their full text, until they expire. A client sends
 * the same access token with every request for its whole lifetime, so each token's signature is
 * checked once per process instead of once per request. A hit re-checks `exp` and `nbf` against
 * the clock; only tokens that passed every check are stored, so a cache hit can never accept a
 * token that full verification would refuse. Returned claims are copies (nested values frozen).
 */
function createVerifiedCache() {
  const entries = new Map<string, AuthClaims>()
  return {
    get(token: string): AuthClaims | undefined {
      const claims = entries.get(token)
      if (!claims) {
        return undefined
      }
      const now = Math.floor(Date.now() / 1000)
      const expired = typeof claims.exp !== 'number' || now > claims.exp + CLOCK_TOLERANCE_SECONDS
      const early = typeof claims.nbf === 'number' && now + CLOCK_TOLERANCE_SECONDS < claims.nbf
      if (expired || early) {
        entries.delete(token)
        return undefined
      }
      return { ...claims }
    },
    set(token: string, claims: AuthClaims): void {
      if (token.length > VERIFIED_CACHE_MAX_TOKEN_LENGTH) {
        return
      }
      if (entries.size >= VERIFIED_CACHE_SIZE) {
        const oldest = entries.keys().next().value
        if (oldest !== undefined) entries.delete(oldest)
      }
      entries.set(token, deepFreeze({ ...claims }))
    },
  }
}

function copyJwks(jwks: JsonWebKeySet): JsonWebKeySet {
  return { keys: jwks.keys.map(key => ({ ...key })) }
}

/**
 * Create the access token service. Keys are imported once, here.
 *
 * - HS256 signs and verifies with `secret` (at least 32 bytes of UTF-8).
 * - RS256 signs with `privateKey` (PKCS#8 PEM, RSA ≥ 2048 bits) and verifies with the public key
 *   derived from it, which `jwks()` publishes with `kid: keyId`.
 *
 * Verification only ever uses the locally configured key: the algorithm is pinned, and `kid`,
 * `jku`, `x5u` and `jwk` headers never select a key (tokens with `jku`, `x5u`, `jwk` or `crit`
 * headers are refused outright).
 *
 * @param options Token options of the module.
 * @param logger Receives the dev warning about large payloads.
 * @param dev Enables development-only diagnostics.
 * @throws Error for a short HS256 secret, a missing or unparsable RS256 key, an unsupported algorithm
 *   or an invalid `expiresIn`.
 */
export async function createTokenService(
  options: TokenServiceOptions,
  logger?: TokenServiceLogger,
  dev = false,
): Promise<TokenService> {
  const { algorithm, issuer, audience } = options
  const defaultExpiresIn = parseDuration(options.expiresIn)
  const keys = await importKeys(options)
  const header: JWTHeaderParameters = {
    alg: algorithm,
    typ: ACCESS_TOKEN_TYP,
    ...(algorithm === 'RS256' && keys.keyId ? { kid: keys.keyId } : {}),
  }
  const verifyOptions: JWTVerifyOptions = {
    algorithms: [algorithm],
    issuer,
    // jose checks `aud` against a string option, including '' (then `aud` must be '' or contain '').
    audience,
    typ: ACCESS_TOKEN_TYP,
    requiredClaims: ['sub', 'exp', 'iat'],
    clockTolerance: CLOCK_TOLERANCE_SECONDS,
  }

  function warnIfLarge(payload: AuthClaims): void {
    if (!dev || !logger) {
      return
    }
    const size = new TextEncoder().encode(JSON.stringify(payload)).byteLength
    if (size > DEV_PAYLOAD_WARN_BYTES) {
      logger.warn(
        `svc-auth: access token payload is ${size} bytes (more than ${DEV_PAYLOAD_WARN_BYTES}); large tokens slow every request, keep custom claims small`,
      )
    }
  }

  async function sign(claims: Record<string, unknown>, signOptions: SignTokenOptions = {}): Promise<SignedAccessToken> {
    const expiresIn = signOptions.expiresIn === undefined ? defaultExpiresIn : parseDuration(signOptions.expiresIn)
    const iat = Math.floor(Date.now() / 1000)
    const payload = {
      ...userClaims(claims),
      iss: issuer,
      aud: audience,
      iat,
      exp: iat + expiresIn,
      jti: randomUUID(),
    }
    if (!hasSubject(payload)) {
      throw new Error('svc-auth: cannot sign an access token without a non-empty "sub" claim')
    }
    warnIfLarge(payload)
    const token = await new SignJWT(payload).setProtectedHeader(header).sign(keys.signingKey)
    return { token, expiresIn, payload }
  }

  const verified = createVerifiedCache()

  async function verify(token: string): Promise<AuthClaims | null> {
    if (typeof token !== 'string' || token === '') {
      return null
    }
    const hit = verified.get(token)
    if (hit) {
      return hit
    }
    try {
      if (hasForbiddenHeader(token)) {
        return null
      }
      const { payload } = await jwtVerify(token, keys.verificationKey, verifyOptions)
      if (!hasSubject(payload)) {
        return null
      }
      verified.set(token, payload)
      return { ...payload }
    }
    catch {
      return null
    }
  }

  return {
    algorithm,
    issuer,
    audience,
    sign,
    verify,
    verifyCached: token => verified.get(token),
    jwks: () => (keys.jwks ? copyJwks(keys.jwks) : null),
  }
}
