// Hashing, HKDF and AES-GCM stay synchronous with node:crypto (Node, and Workers with
// `nodejs_compat`); random values come from the Web Crypto API, the same everywhere.
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto'

/** Bytes drawn from the Web Crypto API at once for the small values below (tokens, IVs). */
const POOL_SIZE = 4096
/** Largest value served from the pool; longer ones are drawn on their own. */
const POOL_MAX_VALUE = 256
let pool = new Uint8Array(0)
let poolOffset = 0

/**
 * `length` random bytes from the Web Crypto API. Small values are cut from a 4 KiB pool (one system
 * call instead of several per refresh, as Node's `randomUUID`); each byte is handed out once and zeroed.
 */
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

/**
 * Keyed hashing (HMAC) of the identifiers used as storage keys: a dump of the store does not reveal
 * them (a plain SHA-256 of a 6-digit code is reversed by trying all million values).
 */
export interface KeyHasher {
  hash(purpose: string, value: string): string
}

/** HKDF's salt when none is given: HashLen zero bytes (RFC 5869, 2.2); an HMAC key of zeros is the empty key. */
const ZERO_SALT = Buffer.alloc(32)
/** The counter byte of HKDF-Expand's first block. */
const FIRST_BLOCK = Buffer.from([1])

/**
 * A purpose-bound subkey of the server secret (HKDF-SHA256, empty salt). Up to 32 bytes it is RFC
 * 5869's two HMACs: the bytes of `hkdfSync` in a fraction of its time (a rotation derives one per token).
 */
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

/** Constant-time comparison of two strings. */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest()
  const hb = createHash('sha256').update(b).digest()
  return timingSafeEqual(ha, hb) && a.length === b.length
}

/**
 * aes-256-gcm sealing of stored records (HKDF-derived key, fresh 12-byte IV): `v1.<iv>.<tag>.<data>`
 * in base64url. `open` returns null for anything that does not authenticate: a missing record.
 */
export interface Sealer {
  seal(plaintext: string): string
  open(sealed: string): string | null
}

/**
 * @param key Seals and opens.
 * @param previousKeys Still open values sealed before a key rotation (tried after `key`).
 * @param purpose HKDF info of the derived AES key: sealers of different purposes never open each
 * other's values. @default 'nuxt-svc-auth:record-encryption'
 */
export function createSealer(key: string, previousKeys: readonly string[] = [], purpose = 'nuxt-svc-auth:record-encryption'): Sealer {
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
          if (plain !== null) return plain
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
