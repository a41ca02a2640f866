import { createHmac } from 'node:crypto'
import { SignJWT, decodeProtectedHeader, errors, jwtVerify } from 'jose'
import type { CryptoKey, JWTHeaderParameters, JWTPayload, JWTVerifyOptions } from 'jose'
import type { AuthClaims } from '../../../types/auth'
import type { Duration, TokenAlgorithm, TokenOptions } from '../../../types/options'
import { parseDuration } from '../config/duration'
import { copyJwks, importKeys, type JsonWebKeySet, type TokenKeyOptions } from './token-keys'
import { createVerifiedCache } from './verified-tokens'

export type { JsonWebKeySet } from './token-keys'

/** `typ` header of access tokens (RFC 9068). Verification refuses every other `typ`. */
export const ACCESS_TOKEN_TYP = 'at+jwt'

/** Leeway (s) for `exp` and `nbf`: clock differences between servers. */
const CLOCK_TOLERANCE_SECONDS = 5

/** In dev, payloads larger than this (bytes of JSON) trigger a warning: tokens travel in headers. */
const DEV_PAYLOAD_WARN_BYTES = 1024

/** Claims the service always writes itself; values passed in for them are ignored. */
const SERVICE_CLAIMS: ReadonlySet<string> = new Set(['iss', 'aud', 'iat', 'exp', 'nbf', 'jti'])

/** Header parameters that point at other keys. Tokens carrying any of them are refused. */
const FORBIDDEN_HEADER_PARAMETERS = ['jku', 'x5u', 'jwk', 'crit'] as const

/** The token options the service uses. */
export type TokenServiceOptions = TokenKeyOptions & Pick<TokenOptions, 'issuer' | 'audience' | 'expiresIn'>

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

export interface TokenService {
  readonly algorithm: TokenAlgorithm
  readonly issuer: string
  readonly audience: string
  /** Sign an access token. `iss`, `aud`, `iat`, `exp`, `nbf` and `jti` in `claims` are ignored. */
  sign(claims: Record<string, unknown>, options?: SignTokenOptions): Promise<SignedAccessToken>
  /** Claims of a valid access token, or null for anything else. Never throws. */
  verify(token: string): Promise<AuthClaims | null>
  /** Claims of a token that passed `verify` in this process and has not expired since (no wait). */
  verifyCached(token: string): AuthClaims | undefined
  /** Public keys for RS256 (`/.well-known/jwks.json`), null for HS256. */
  jwks(): JsonWebKeySet | null
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

/** HS256 compact JWS in one synchronous step: jose's bytes without Web Crypto's asynchronous job. */
function hs256Signer(secret: string, header: JWTHeaderParameters): (payload: Record<string, unknown>) => string {
  const key = Buffer.from(secret, 'utf8')
  const encodedHeader = Buffer.from(JSON.stringify(header), 'utf8').toString('base64url')
  return (payload) => {
    // As jose: numeric dates must be finite.
    for (const claim of ['iat', 'nbf', 'exp'] as const) {
      const value = payload[claim]
      if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError(`"${claim}" claim must be a finite number`)
    }
    const input = `${encodedHeader}.${Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url')}`
    return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`
  }
}

/**
 * Create the access token service. Only configured keys ever verify: the algorithm is pinned and
 * `jku`, `x5u`, `jwk`, `crit` headers are refused. Throws for a bad key or `expiresIn`.
 * `onPreviousKey` is called when a previous key verified a token (not for cached ones).
 */
export async function createTokenService(
  options: TokenServiceOptions,
  logger?: TokenServiceLogger,
  dev = false,
  onPreviousKey?: () => void,
): Promise<TokenService> {
  const { algorithm, issuer, audience } = options
  const defaultExpiresIn = parseDuration(options.expiresIn)
  const keys = await importKeys(options)
  const header: JWTHeaderParameters = {
    alg: algorithm,
    typ: ACCESS_TOKEN_TYP,
    ...(algorithm === 'RS256' && keys.keyId ? { kid: keys.keyId } : {}),
  }
  const signCompact = algorithm === 'HS256' ? hs256Signer(options.secret, header) : undefined
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
      jti: globalThis.crypto.randomUUID(),
    }
    if (!hasSubject(payload)) {
      throw new Error('svc-auth: cannot sign an access token without a non-empty "sub" claim')
    }
    warnIfLarge(payload)
    const token = signCompact ? signCompact(payload) : await new SignJWT(payload).setProtectedHeader(header).sign(keys.signingKey)
    return { token, expiresIn, payload }
  }

  const verified = createVerifiedCache(CLOCK_TOLERANCE_SECONDS)

  /** Keys a token may be checked with: RS256 the key its `kid` names (current without `kid`); HS256 all secrets. */
  function candidateKeys(token: string): CryptoKey[] {
    if (algorithm !== 'RS256') return [keys.verificationKey, ...keys.previousKeys]
    const { kid } = decodeProtectedHeader(token)
    if (kid === undefined) return [keys.verificationKey]
    const key = typeof kid === 'string' ? keys.byKid.get(kid) : undefined
    return key ? [key] : []
  }

  /** Payload of a token one of the configured keys verifies (never a key the token names), or null. */
  async function verifyWithKeys(token: string): Promise<JWTPayload | null> {
    for (const key of candidateKeys(token)) {
      try {
        const { payload } = await jwtVerify(token, key, verifyOptions)
        if (key !== keys.verificationKey) onPreviousKey?.()
        return payload
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
