/** The second factor's cryptography: TOTP secrets (made, sealed, checked) and recovery codes. No store access. */
import { createHmac } from 'node:crypto'
import { HOTP, Secret, TOTP } from 'otpauth'
import type { ModuleOptions } from '../../types/options'
import type { TwoFactorAlgorithm } from '../two-factor-types'
import type { AuthContext } from '../../server/lib/core/context'
import { createKeyHasher, createSealer, deriveKey, randomBelow, safeEqual, type KeyHasher, type Sealer } from '../../server/lib/store/crypto'
import { stringList } from '../../server/lib/config/string-list'
import { oncePer } from '../../shared/values'

/** The same HKDF info under `twoFactor.secret` and `token.secret`: a moved `token.secret` still opens what it sealed. */
const SECRET_PURPOSE = 'nuxt-svc-auth:two-factor-secret'
const RECOVERY_KEY_PURPOSE = 'nuxt-svc-auth:two-factor-recovery-code'
/** HMAC purpose of recovery codes from before they had a key of their own: still matched, never made. */
const LEGACY_RECOVERY_PURPOSE = 'two-factor-recovery-code'

/**
 * Keys of the second factor's data, current first: `twoFactor.secret` and its previous secrets, else
 * `token.secret` and its previous secrets, then any `twoFactor.previousSecrets`.
 */
export function twoFactorKeys(options: Pick<ModuleOptions, 'token' | 'twoFactor'>): string[] {
  const previous = stringList(options.twoFactor.previousSecrets)
  const own = options.twoFactor.secret
  const keys = own ? [own, ...previous] : [options.token.secret, ...stringList(options.token.previousSecrets), ...previous]
  return [...new Set(keys)]
}

/** What the keys of the second factor's data are made into (current first), once per context. */
interface TwoFactorKeyring {
  sealers: Sealer[]
  recoveryKeys: Buffer[]
  /** Recovery codes HMACed before they had their own key. */
  legacyHashers: KeyHasher[]
}

const keyringOf = oncePer((ctx: AuthContext): TwoFactorKeyring => {
  const keys = twoFactorKeys(ctx.options)
  return {
    sealers: keys.map(key => createSealer(key, [], SECRET_PURPOSE)),
    recoveryKeys: keys.map(key => deriveKey(key, RECOVERY_KEY_PURPOSE)),
    legacyHashers: keys.map(createKeyHasher),
  }
})

export interface TotpParameters {
  algorithm: TwoFactorAlgorithm
  digits: number
  period: number
}

/** Bytes of a new secret: the HMAC's block-size recommendation of RFC 6238 (20, 32, 64). */
const SECRET_BYTES: Record<TwoFactorAlgorithm, number> = { SHA1: 20, SHA256: 32, SHA512: 64 }

export function newTotpSecret(algorithm: TwoFactorAlgorithm): string {
  return new Secret({ size: SECRET_BYTES[algorithm] }).base32
}

export function totpUri(secret: string, params: TotpParameters, issuer: string, account: string): string {
  return new TOTP({ issuer, label: account || 'account', secret: Secret.fromBase32(secret), ...params }).toString()
}

/** The time step a code matches (the current one and `window` steps either side), or null. */
export function matchTimeStep(secret: string, params: TotpParameters, code: string, window: number, now = Date.now()): number | null {
  if (!new RegExp(`^\\d{${params.digits}}$`).test(code)) return null
  const counter = Math.floor(now / 1000 / params.period)
  const delta = HOTP.validate({ token: code, secret: Secret.fromBase32(secret), algorithm: params.algorithm, digits: params.digits, counter, window })
  return delta === null ? null : counter + delta
}

/** For tests. */
export function codeAt(secret: string, params: TotpParameters, step: number): string {
  return HOTP.generate({ secret: Secret.fromBase32(secret), algorithm: params.algorithm, digits: params.digits, counter: step })
}

export interface SecretBox {
  seal(userId: string, secret: string): string
  /** `stale`: sealed under a previous key. */
  open(userId: string, sealed: string): { secret: string, stale: boolean } | null
}

/**
 * The sealer of TOTP secrets: aes-256-gcm under the current {@link twoFactorKeys} key (previous ones
 * still open, as `stale`); the user's id is sealed in, so a secret copied to another user never opens.
 */
export const secretBox = oncePer((ctx: AuthContext): SecretBox => {
  const { sealers } = keyringOf(ctx)
  return {
    seal: (userId, secret) => sealers[0]!.seal(JSON.stringify({ u: userId, s: secret })),
    open(userId, sealed) {
      for (const [index, sealer] of sealers.entries()) {
        const plain = sealer.open(sealed)
        if (plain === null) continue
        try {
          const value = JSON.parse(plain) as { u?: unknown, s?: unknown }
          if (value.u === userId && typeof value.s === 'string' && value.s !== '') return { secret: value.s, stale: index > 0 }
        }
        catch {
          // Not ours: treated as unreadable.
        }
        return null
      }
      return null
    },
  }
})

/** Letters and digits of recovery codes: no 0/o, 1/i/l, so a code read aloud or typed is unambiguous. */
const RECOVERY_ALPHABET = '23456789abcdefghjkmnpqrstuvwxyz'
const RECOVERY_LENGTH = 10

/** `xxxxx-xxxxx` (about 50 bits each). */
export function newRecoveryCodes(count: number): string[] {
  return Array.from({ length: count }, () => {
    let code = ''
    for (let i = 0; i < RECOVERY_LENGTH; i++) code += RECOVERY_ALPHABET[randomBelow(RECOVERY_ALPHABET.length)]
    return `${code.slice(0, 5)}-${code.slice(5)}`
  })
}

/** A typed recovery code in canonical form (case, spaces and dashes ignored), or null when it cannot be one. */
export function normalizeRecoveryCode(typed: string): string | null {
  const code = typed.toLowerCase().replace(/[\s-]/g, '')
  return code.length === RECOVERY_LENGTH && [...code].every(c => RECOVERY_ALPHABET.includes(c)) ? code : null
}

function recoveryHmac(key: Buffer, userId: string, code: string): string {
  return createHmac('sha256', key).update(`${userId}\0${code}`).digest('hex')
}

/** Under the current two-factor key (what the state keeps). */
export function hashRecoveryCode(ctx: AuthContext, userId: string, code: string): string {
  return recoveryHmac(keyringOf(ctx).recoveryKeys[0]!, userId, normalizeRecoveryCode(code) ?? code)
}

/** The stored HMAC a typed code matches under any key; every stored HMAC is compared with every candidate in constant time. */
export function findRecoveryCode(ctx: AuthContext, userId: string, typed: string, stored: readonly string[]): string | undefined {
  const code = normalizeRecoveryCode(typed)
  if (!code) return undefined
  const { recoveryKeys, legacyHashers } = keyringOf(ctx)
  const candidates = [
    ...recoveryKeys.map(key => recoveryHmac(key, userId, code)),
    ...legacyHashers.map(hasher => hasher.hash(LEGACY_RECOVERY_PURPOSE, `${userId}\0${code}`)),
  ]
  let found: string | undefined
  for (const hash of stored) {
    let matched = false
    for (const candidate of candidates) matched = safeEqual(candidate, hash) || matched
    if (matched) found ??= hash
  }
  return found
}
