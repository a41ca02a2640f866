import { createPublicKey, randomUUID } from 'node:crypto'
import { SignJWT, calculateJwkThumbprint, decodeProtectedHeader, errors, importJWK, importPKCS8, jwtVerify } from 'jose'
import type { CryptoKey, JWK, JWTHeaderParameters, JWTPayload, JWTVerifyOptions } from 'jose'
import type { AuthClaims } from '../../types/auth'
import type { Duration, RsaVerificationKey, TokenAlgorithm, TokenOptions } from '../../types/options'
import { parseDuration } from './duration'
import { stringList } from './string-list'

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
> & Partial<Pick<TokenOptions, 'previousSecrets' | 'previousKeys'>>

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
  /** Keys that still verify but never sign (previous HS256 secrets), tried after `verificationKey`. */
  previousKeys: CryptoKey[]
  /** RS256: every configured public key by its `kid` (current and previous). */
  byKid: Map<string, CryptoKey>
  keyId?: string
  jwks: JsonWebKeySet | null
}

async function importHmacKey(secret: string, name: string): Promise<CryptoKey> {
  const bytes = new TextEncoder().encode(secret ?? '')
  if (bytes.byteLength < MIN_HS256_SECRET_BYTES) {
    throw new Error(
      `svc-auth: ${name} must be at least ${MIN_HS256_SECRET_BYTES} bytes for HS256 (got ${bytes.byteLength})`,
    )
  }
  return crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify'])
}

async function importHs256Keys(secret: string, previousSecrets: readonly string[]): Promise<KeyMaterial> {
  const key = await importHmacKey(secret, 'token.secret')
  const previousKeys = await Promise.all(previousSecrets.map(previous => importHmacKey(previous, 'token.previousSecrets')))
  return { signingKey: key, verificationKey: key, previousKeys, byKid: new Map(), jwks: null }
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

/** Public half of a PEM key (private or public) as a JWK holding only `kty`, `n` and `e`. */
function derivePublicJwk(pem: string): JWK {
  const { kty, n, e } = createPublicKey(pem).export({ format: 'jwk' })
  return { kty, n, e }
}

async function importPublicJwk(jwk: JWK, name: string): Promise<CryptoKey> {
  const key = await importJWK(jwk, 'RS256')
  if (key instanceof Uint8Array) throw new TypeError(`svc-auth: unexpected symmetric key derived from ${name}`)
  return key
}

/** A verification-only key of `token.previousKeys`: its public JWK (with `kid`) and CryptoKey. */
async function importRs256VerificationKey(entry: RsaVerificationKey, index: number): Promise<{ jwk: JWK, key: CryptoKey }> {
  const name = `token.previousKeys[${index}]`
  let publicJwk: JWK
  try {
    publicJwk = derivePublicJwk(normalizePem(entry?.key ?? ''))
  }
  catch (cause) {
    throw new Error(`svc-auth: ${name}.key is not a PEM RSA key (PKCS#8 private or SPKI public)`, { cause })
  }
  if (publicJwk.kty !== 'RSA' || Buffer.from(publicJwk.n ?? '', 'base64url').byteLength * 8 < MIN_RSA_MODULUS_BITS) {
    throw new Error(`svc-auth: ${name}.key must be an RSA key of at least ${MIN_RSA_MODULUS_BITS} bits`)
  }
  const kid = entry.keyId || await calculateJwkThumbprint(publicJwk)
  return { jwk: { ...publicJwk, kid, alg: 'RS256', use: 'sig' }, key: await importPublicJwk(publicJwk, name) }
}

async function importRs256Keys(privateKey: string, keyId: string, previous: readonly RsaVerificationKey[]): Promise<KeyMaterial> {
  if (typeof privateKey !== 'string' || privateKey.trim() === '') {
    throw new Error('svc-auth: token.algorithm RS256 requires token.privateKey (a PKCS#8 PEM RSA private key)')
  }
  const pem = normalizePem(privateKey)
  const signingKey = await importRs256PrivateKey(pem)
  const publicJwk = derivePublicJwk(pem)
  const verificationKey = await importPublicJwk(publicJwk, 'token.privateKey')
  const kid = keyId || await calculateJwkThumbprint(publicJwk)
  const jwks: JWK[] = [{ ...publicJwk, kid, alg: 'RS256', use: 'sig' }]
  const byKid = new Map<string, CryptoKey>([[kid, verificationKey]])
  const others = await Promise.all(previous.map(importRs256VerificationKey))
  for (const other of others) {
    const otherKid = other.jwk.kid as string
    if (byKid.has(otherKid)) throw new Error(`svc-auth: token key id "${otherKid}" is used by two keys (token.keyId and token.previousKeys must be unique)`)
    byKid.set(otherKid, other.key)
    jwks.push(other.jwk)
  }
  return { signingKey, verificationKey, previousKeys: [], byKid, keyId: kid, jwks: { keys: jwks } }
}

function importKeys(options: TokenServiceOptions): Promise<KeyMaterial> {
  switch (options.algorithm) {
    case 'HS256':
      return importHs256Keys(options.secret, stringList(options.previousSecrets))
    case 'RS256':
      return importRs256Keys(options.privateKey, options.keyId, Array.isArray(options.previousKeys) ? options.previousKeys : [])
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
/**
 * Tokens verified before, by their signature: looking up a header's fresh string by its whole text
 * would hash all of it on every request, its signature is a seventh of it. A hit must be the very
 * same token (compared in full); a forgery that reuses a signature is a miss and is verified.
 */
function createVerifiedCache() {
  const entries = new Map<string, { token: string, claims: AuthClaims }>()
  const signatureOf = (token: string) => token.slice(token.lastIndexOf('.') + 1)
  return {
    get(token: string): AuthClaims | undefined {
      const signature = signatureOf(token)
      const entry = entries.get(signature)
      if (!entry || entry.token !== token) {
        return undefined
      }
      const { claims } = entry
      const now = Math.floor(Date.now() / 1000)
      const expired = typeof claims.exp !== 'number' || now > claims.exp + CLOCK_TOLERANCE_SECONDS
      const early = typeof claims.nbf === 'number' && now + CLOCK_TOLERANCE_SECONDS < claims.nbf
      if (expired || early) {
        entries.delete(signature)
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
      entries.set(signatureOf(token), { token, claims: deepFreeze({ ...claims }) })
    },
  }
}

function copyJwks(jwks: JsonWebKeySet): JsonWebKeySet {
  return { keys: jwks.keys.map(key => ({ ...key })) }
}

/**
 * Create the access token service. Keys are imported once, here.
 *
 * - HS256 signs and verifies with `secret` (at least 32 bytes of UTF-8); each of
 *   `previousSecrets` still verifies (key rotation).
 * - RS256 signs with `privateKey` (PKCS#8 PEM, RSA ≥ 2048 bits) under `kid: keyId` (default: the
 *   key's thumbprint); a token is verified with the configured key its `kid` names (`privateKey`'s
 *   public half or one of `previousKeys`), a token without `kid` with the current key. `jwks()`
 *   publishes every configured public key.
 *
 * Verification only ever uses the locally configured keys: the algorithm is pinned, `kid` only
 * chooses among the configured keys, and `jku`, `x5u` and `jwk` headers never provide one (tokens
 * with `jku`, `x5u`, `jwk` or `crit` headers are refused outright).
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

  /**
   * The keys a token may be checked with. RS256: the configured key its `kid` names (none for an
   * unknown `kid`), or the current key for a token without `kid`. HS256: the current secret,
   * then the previous ones.
   */
  function candidateKeys(token: string): CryptoKey[] {
    if (algorithm !== 'RS256') return [keys.verificationKey, ...keys.previousKeys]
    const { kid } = decodeProtectedHeader(token)
    if (kid === undefined) return [keys.verificationKey]
    const key = typeof kid === 'string' ? keys.byKid.get(kid) : undefined
    return key ? [key] : []
  }

  /**
   * Payload of a token whose signature one of the configured keys checks (the current key first,
   * then the previous ones, never a key named by the token), or null.
   */
  async function verifyWithKeys(token: string): Promise<JWTPayload | null> {
    for (const key of candidateKeys(token)) {
      try {
        return (await jwtVerify(token, key, verifyOptions)).payload
      }
      catch (error) {
        // Only a signature mismatch is worth trying the next key for.
        if (!(error instanceof errors.JWSSignatureVerificationFailed)) return null
      }
    }
    return null
  }

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
      const payload = await verifyWithKeys(token)
      if (!payload || !hasSubject(payload)) {
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
