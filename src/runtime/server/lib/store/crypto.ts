// Hashing, HKDF and AES-GCM are synchronous node:crypto; random values come from the Web Crypto API.
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto'

/** Bytes drawn from the Web Crypto API at once for the small values below (tokens, IVs). */
const POOL_SIZE = 4096
/** Largest value served from the pool; longer ones are drawn on their own. */
const POOL_MAX_VALUE = 256
let pool = new Uint8Array(0)
let poolOffset = 0

/** `length` random bytes; small values are cut from a pool (one system call per 4 KiB), each byte handed out once. */
export function randomBytes(length: number): Uint8Array<ArrayBuffer> {
  if (!Number.isInteger(length) || length < 0 || length > POOL_MAX_VALUE) return globalThis.crypto.getRandomValues(new Uint8Array(length))
  if (poolOffset + length > pool.length) {
    pool = globalThis.crypto.getRandomValues(new Uint8Array(POOL_SIZE))
    poolOffset = 0
  }
  const value = pool.slice(poolOffset, poolOffset + length)
  pool.fill(0, poolOffset, poolOffset + length)
  poolOffset += length
  return value
}

/** Random opaque token (base64url, `bytes` of entropy). */
export function randomToken(bytes = 32): string {
  return Buffer.from(randomBytes(bytes)).toString('base64url')
}

/** A uniformly random whole number below `max` (≤ 2^32); draws past the last multiple of `max` are redrawn, against bias. */
export function randomBelow(max: number): number {
  if (!Number.isInteger(max) || max < 1 || max > 2 ** 32) throw new RangeError(`randomBelow: max must be a whole number from 1 to 2^32 (got ${max})`)
  const limit = 2 ** 32 - (2 ** 32 % max)
  const draw = new Uint32Array(1)
  for (;;) {
    globalThis.crypto.getRandomValues(draw)
    if (draw[0]! < limit) return draw[0]! % max
  }
}

/** A 6-digit code from a cryptographic source (leading zeros kept). */
export function randomDigits(length = 6): string {
  let out = ''
  for (let i = 0; i < length; i++) out += String(randomBelow(10))
  return out
}

/** HMAC of storage-key identifiers: a plain SHA-256 of a 6-digit code is reversed by trying a million values. */
export interface KeyHasher {
  hash(purpose: string, value: string): string
}

/** HKDF's salt when none is given: HashLen zero bytes (RFC 5869, 2.2); an HMAC key of zeros is the empty key. */
const ZERO_SALT = Buffer.alloc(32)
/** The counter byte of HKDF-Expand's first block. */
const FIRST_BLOCK = Buffer.from([1])

/** A purpose-bound subkey (HKDF-SHA256, empty salt); up to 32 bytes as RFC 5869's two HMACs, faster than `hkdfSync`. */
export function deriveKey(secret: string, info: string, length = 32): Buffer {
  if (length > 32 || length < 1) return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), info, length))
  const prk = createHmac('sha256', ZERO_SALT).update(secret, 'utf8').digest()
  const okm = createHmac('sha256', prk).update(info, 'utf8').update(FIRST_BLOCK).digest()
  return length === 32 ? okm : okm.subarray(0, length)
}

export function createKeyHasher(secret: string): KeyHasher {
  const key = deriveKey(secret, 'nuxt-svc-auth:storage-keys')
  return {
    hash(purpose, value) {
      return createHmac('sha256', key).update(purpose).update('\0').update(value).digest('hex')
    },
  }
}

/** The PKCE S256 challenge of a code verifier (RFC 7636 §4.2): base64url of its SHA-256. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url')
}

/** Constant-time comparison of two strings. */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest()
  const hb = createHash('sha256').update(b).digest()
  return timingSafeEqual(ha, hb) && a.length === b.length
}

/** aes-256-gcm sealing (`v1.<iv>.<tag>.<data>`); `open` returns null for anything that does not authenticate. */
export interface Sealer {
  seal(plaintext: string): string
  open(sealed: string): string | null
}

/**
 * `previousKeys` still open older values (`onPreviousKey` is called when one does); sealers of different
 * `purpose`s never open each other's.
 */
export function createSealer(key: string, previousKeys: readonly string[] = [], purpose = 'nuxt-svc-auth:record-encryption', onPreviousKey?: () => void): Sealer {
  const aesKey = deriveKey(key, purpose)
  const openers = previousKeys.map(previous => createSealer(previous, [], purpose))
  return {
    seal(plaintext) {
      const iv = Buffer.from(randomBytes(12))
      const cipher = createCipheriv('aes-256-gcm', aesKey, iv)
      const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
      return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.')
    },
    open(sealed) {
      const parts = sealed.split('.')
      if (parts.length !== 4 || parts[0] !== 'v1') return null
      try {
        const decipher = createDecipheriv('aes-256-gcm', aesKey, Buffer.from(parts[1]!, 'base64url'), { authTagLength: 16 })
        decipher.setAuthTag(Buffer.from(parts[2]!, 'base64url'))
        return Buffer.concat([decipher.update(Buffer.from(parts[3]!, 'base64url')), decipher.final()]).toString('utf8')
      }
      catch {
        for (const opener of openers) {
          const plain = opener.open(sealed)
          if (plain === null) continue
          onPreviousKey?.()
          return plain
        }
        return null
      }
    },
  }
}

/** Pass-through used when encryption at rest is off. */
export const plainSealer: Sealer = {
  seal: plaintext => plaintext,
  open: sealed => (sealed.startsWith('v1.') ? null : sealed),
}
