/** Key material of the access token service: HS256 secrets, RS256 keys by `kid`, and the JWKS. */
import { createPublicKey } from 'node:crypto'
import { calculateJwkThumbprint, importJWK, importPKCS8 } from 'jose'
import type { CryptoKey, JWK } from 'jose'
import type { RsaVerificationKey, TokenAlgorithm, TokenOptions } from '../../../types/options'
import { stringList } from '../config/string-list'

/** The options the keys come from. */
export type TokenKeyOptions = Pick<TokenOptions, 'secret' | 'algorithm' | 'privateKey' | 'keyId'> & Partial<Pick<TokenOptions, 'previousSecrets' | 'previousKeys'>>

const MIN_HS256_SECRET_BYTES = 32
const MIN_RSA_MODULUS_BITS = 2048

const SUPPORTED_ALGORITHMS: readonly TokenAlgorithm[] = ['HS256', 'RS256']

/** A JSON Web Key Set (RFC 7517), as `/.well-known/jwks.json` serves it. */
export interface JsonWebKeySet {
  keys: JWK[]
}

/** The keys of the token service, imported once. */
export interface KeyMaterial {
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

/** Imports the keys of `token` options; throws naming the option for a short secret or a bad key. */
export function importKeys(options: TokenKeyOptions): Promise<KeyMaterial> {
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

/** A copy of a key set that callers may change freely. */
export function copyJwks(jwks: JsonWebKeySet): JsonWebKeySet {
  return { keys: jwks.keys.map(key => ({ ...key })) }
}
