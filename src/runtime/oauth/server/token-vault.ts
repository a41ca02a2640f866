/**
 * The providers' tokens kept server-side (`providers.<name>.keepTokens`): one record per user and provider, keyed by
 * HMAC, its tokens sealed with a key of their own. Every write of a record runs under its lease, so a login, an
 * upstream refresh and a drop never overwrite each other.
 */
import { z } from 'zod'
import type { ProviderTokens } from '../../types/auth'
import type { ModuleOptions } from '../../types/options'
import type { AuthContext } from '../../server/lib/core/context'
import { createSealer, type Sealer } from '../../server/lib/store/crypto'
import type { RecordKey } from '../../server/lib/store/record-store'
import { recordTypes } from '../../server/lib/store/record-types'
import { stringList } from '../../server/lib/config/string-list'
import { withLease } from '../../server/lib/edge/lease'
import { oncePer } from '../../shared/values'
import { keepTokensOf } from './provider-registry'
import { PROVIDER_TIMEOUT_MS } from './provider-http'

/** The vault's record kinds (see store/record-types.ts). */
export const VAULT_RECORDS = recordTypes({
  providerTokens: 'provider-tokens',
  providerTokensLease: 'provider-tokens-lease',
})

/** The tokens of one user at one provider, as kept (times in epoch ms). */
export interface KeptTokens {
  accessToken: string
  refreshToken?: string
  /** When the access token expires; undefined: the provider gave no lifetime. */
  expiresAt?: number
  scope?: string
  /** The provider refused the refresh token (`invalid_grant`): a new login with it is needed. */
  broken?: boolean
  updatedAt: number
}

const keptTokens = z.object({
  accessToken: z.string(),
  refreshToken: z.string().optional(),
  expiresAt: z.number().optional(),
  scope: z.string().optional(),
  broken: z.boolean().optional(),
  updatedAt: z.number(),
})

/** The sealed plaintext: the tokens with whose they are, so a value copied under another user's key never opens. */
const sealedValue = z.object({ u: z.string(), p: z.string(), t: keptTokens })

/** The stored record: the sealed tokens only. */
const vaultRecord = z.object({ sealed: z.string() })

/** HKDF info of the vault's key: its own purpose, whatever the secret it derives from. */
const VAULT_PURPOSE = 'nuxt-svc-auth:provider-tokens'

/** How long a record lives after its last write: `true`, a session's lifetime; `offline`, a year. */
const OFFLINE_TTL_SECONDS = 365 * 24 * 3600

/** The lease outlasts a provider request (its timeout), so that a refresh never runs twice at once. */
const LEASE_SECONDS = Math.ceil(PROVIDER_TIMEOUT_MS / 1000) * 2
/** Waiters wait for one provider request and a little more. */
const LEASE_WAIT_MS = PROVIDER_TIMEOUT_MS + 5000

/**
 * The keys that seal and open kept tokens, current first: `tokenRefresh.encryption.key` and its previous keys when
 * encryption is on, then `token.secret` and its previous secrets.
 */
export function vaultKeys(options: Pick<ModuleOptions, 'token' | 'tokenRefresh'>): string[] {
  const encryption = options.tokenRefresh.encryption
  const own = encryption.enabled && encryption.key ? [encryption.key, ...stringList(encryption.previousKeys)] : []
  return [...new Set([...own, options.token.secret, ...stringList(options.token.previousSecrets)].filter(Boolean))]
}

const sealersOf = oncePer((ctx: AuthContext): Sealer[] => vaultKeys(ctx.options).map(key => createSealer(key, [], VAULT_PURPOSE)))

const recordId = (userId: string, provider: string) => `${provider}\0${userId}`
export const vaultKey = (ctx: AuthContext, userId: string, provider: string): RecordKey => ctx.store.key(VAULT_RECORDS.providerTokens, recordId(userId, provider))
const leaseKey = (ctx: AuthContext, userId: string, provider: string): RecordKey => ctx.store.key(VAULT_RECORDS.providerTokensLease, recordId(userId, provider))

/** Seals tokens for one user and provider under the current key. */
export function sealTokens(ctx: AuthContext, userId: string, provider: string, tokens: KeptTokens): string {
  return sealersOf(ctx)[0]!.seal(JSON.stringify({ u: userId, p: provider, t: tokens }))
}

/** Opens sealed tokens with the current or a previous key; null when they do not open or are another user's or provider's. */
export function openTokens(ctx: AuthContext, userId: string, provider: string, sealed: string): KeptTokens | null {
  for (const sealer of sealersOf(ctx)) {
    const plain = sealer.open(sealed)
    if (plain === null) continue
    try {
      const value = sealedValue.safeParse(JSON.parse(plain))
      return value.success && value.data.u === userId && value.data.p === provider ? value.data.t : null
    }
    catch {
      return null
    }
  }
  return null
}

/** The kept tokens of a user at a provider, or null. */
export async function readKeptTokens(ctx: AuthContext, userId: string, provider: string): Promise<KeptTokens | null> {
  const record = await ctx.store.read(vaultKey(ctx, userId, provider), vaultRecord)
  return record ? openTokens(ctx, userId, provider, record.sealed) : null
}

/** Stores the tokens (call it under {@link underLease}); the record lives on for its TTL from now. */
export async function writeKeptTokens(ctx: AuthContext, userId: string, provider: string, tokens: KeptTokens): Promise<void> {
  const ttl = keepTokensOf(ctx.options, provider) === 'offline' ? OFFLINE_TTL_SECONDS : ctx.lifetimes.refresh
  await ctx.store.write(vaultKey(ctx, userId, provider), { sealed: sealTokens(ctx, userId, provider, tokens) }, ttl)
}

/** Runs `fn` while no other process or request changes the tokens of this user at this provider. */
export function underLease<T>(ctx: AuthContext, userId: string, provider: string, fn: () => Promise<T>): Promise<T> {
  return withLease(ctx.store, leaseKey(ctx, userId, provider), fn, {
    leaseSeconds: LEASE_SECONDS,
    waitMs: LEASE_WAIT_MS,
    onReleaseError: error => ctx.logger.warn('Releasing the lease of kept provider tokens failed (it lapses)', error),
  })
}

/** The tokens of a login, as kept: they replace what was kept, except a refresh token the provider did not send again. */
export async function keepLoginTokens(ctx: AuthContext, userId: string, provider: string, tokens: ProviderTokens): Promise<void> {
  if (!keepTokensOf(ctx.options, provider) || !tokens.access_token) return
  await underLease(ctx, userId, provider, async () => {
    const before = tokens.refresh_token ? null : await readKeptTokens(ctx, userId, provider)
    const now = Date.now()
    await writeKeptTokens(ctx, userId, provider, {
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token ?? (before?.broken ? undefined : before?.refreshToken),
      expiresAt: typeof tokens.expires_in === 'number' ? now + tokens.expires_in * 1000 : undefined,
      scope: tokens.scope,
      updatedAt: now,
    })
  })
}

/** Removes the kept tokens of a user at the given providers (again under the lease: a refresh under way writes nothing back). */
export async function dropKeptTokens(ctx: AuthContext, userId: string, providers: readonly string[]): Promise<void> {
  await Promise.all(providers.map(async (provider) => {
    const key = vaultKey(ctx, userId, provider)
    await ctx.store.remove(key)
    await underLease(ctx, userId, provider, () => ctx.store.remove(key))
  }))
}
