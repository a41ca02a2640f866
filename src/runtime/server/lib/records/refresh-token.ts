import type { AuthUser, CustomClaims, ImpersonationContext } from '../../../types/auth'
import type { AuthContext } from '../context'
import { randomToken } from '../crypto'
import { storableUser } from './user'

/**
 * A stored refresh token. Every token belongs to a family (one login = one session id, `sid` in
 * access tokens); rotation keeps the family and replaces the token.
 */
export interface RefreshTokenRecord {
  family: string
  userId: string
  user: AuthUser
  claims: CustomClaims
  provider?: string
  /** Set for impersonated sessions, which cannot be refreshed. */
  impersonation?: ImpersonationContext
  issuedAt: number
}

/** Marker left on a token once it has been rotated (reuse detection). */
interface RotationMarker {
  family: string
  userId: string
  at: number
}

const TOKEN = 'rt'
const ROTATED = 'rotated'
const REVOKED_FAMILY = 'family-revoked'
const USER_INDEX = 'user'

export type RefreshResult =
  | { status: 'invalid' }
  | { status: 'reused', family: string, userId: string }
  | { status: 'ok', record: RefreshTokenRecord, token: string | undefined }

export interface ReadRefreshToken {
  key: string
  record: RefreshTokenRecord
}

function userIndexPrefix(ctx: AuthContext, userId: string): string {
  return `${ctx.store.key(USER_INDEX, userId)}:`
}

async function isFamilyRevoked(ctx: AuthContext, family: string): Promise<boolean> {
  return (await ctx.store.read<number>(ctx.store.key(REVOKED_FAMILY, family))) !== null
}

/** Stores a new refresh token (new family unless one is given) and returns it. */
export async function issueRefreshToken(ctx: AuthContext, input: { family?: string, user: AuthUser, userId: string, claims: CustomClaims, provider?: string, impersonation?: ImpersonationContext, ttlSeconds?: number }): Promise<{ token: string, record: RefreshTokenRecord }> {
  const token = randomToken(32)
  const record: RefreshTokenRecord = {
    family: input.family ?? randomToken(16),
    userId: input.userId,
    user: storableUser(input.user),
    claims: input.claims,
    provider: input.provider,
    impersonation: input.impersonation,
    issuedAt: Date.now(),
  }
  const ttl = input.ttlSeconds ?? ctx.lifetimes.refresh
  await ctx.store.write(ctx.store.key(TOKEN, token), record, ttl)
  await ctx.store.write(`${userIndexPrefix(ctx, record.userId)}${record.family}`, { family: record.family, at: record.issuedAt }, ttl)
  return { token, record }
}

/** Looks a token up without consuming it. Null when unknown, expired, undecryptable or revoked. */
export async function readRefreshToken(ctx: AuthContext, token: string): Promise<ReadRefreshToken | null> {
  const key = ctx.store.key(TOKEN, token)
  const record = await ctx.store.read<RefreshTokenRecord>(key)
  if (!record || typeof record.family !== 'string') return null
  if (await isFamilyRevoked(ctx, record.family)) return null
  return { key, record }
}

/**
 * Uses a refresh token: validates it, then rotates it. The first use wins the rotation (an atomic
 * set-if-absent on a rotation marker) and gets a new token of the same family. A use of the same
 * token within `reuseGracePeriod` seconds (tabs refreshing together) is still honoured, without a
 * new token. Any later use is reuse of a stolen token: the whole family is revoked.
 */
export async function useRefreshToken(ctx: AuthContext, token: string, options: { rotate: (record: RefreshTokenRecord) => boolean } = { rotate: () => true }): Promise<RefreshResult> {
  const markerKey = ctx.store.key(ROTATED, token)
  const found = await readRefreshToken(ctx, token)
  if (!found) {
    const marker = await ctx.store.read<RotationMarker>(markerKey)
    if (marker && !(await isFamilyRevoked(ctx, marker.family))) {
      await revokeFamily(ctx, marker.family, marker.userId)
      return { status: 'reused', family: marker.family, userId: marker.userId }
    }
    return { status: 'invalid' }
  }
  const { record, key } = found
  if (!options.rotate(record)) return { status: 'ok', record, token: undefined }

  const grace = ctx.options.tokenRefresh.reuseGracePeriod
  const now = Date.now()
  const won = await ctx.store.writeIfAbsent<RotationMarker>(markerKey, { family: record.family, userId: record.userId, at: now }, ctx.lifetimes.refresh)
  if (won) {
    const { family, user, userId, claims, provider, impersonation } = record
    const next = await issueRefreshToken(ctx, { family, user, userId, claims, provider, impersonation })
    if (grace > 0) await ctx.store.write(key, record, grace)
    else await ctx.store.remove(key)
    return { status: 'ok', record: next.record, token: next.token }
  }
  const marker = await ctx.store.read<RotationMarker>(markerKey)
  if (marker && now - marker.at <= grace * 1000) return { status: 'ok', record, token: undefined }
  await revokeFamily(ctx, record.family, record.userId)
  return { status: 'reused', family: record.family, userId: record.userId }
}

/** Marks a family revoked: none of its tokens refreshes any more. */
export async function revokeFamily(ctx: AuthContext, family: string, userId: string): Promise<void> {
  await ctx.store.write(ctx.store.key(REVOKED_FAMILY, family), Date.now(), ctx.lifetimes.refresh)
  await ctx.store.remove(`${userIndexPrefix(ctx, userId)}${family}`)
}

/** Logout: deletes the token and revokes its family. Unknown tokens are ignored. */
export async function revokeRefreshToken(ctx: AuthContext, token: string): Promise<RefreshTokenRecord | null> {
  const key = ctx.store.key(TOKEN, token)
  const record = await ctx.store.take<RefreshTokenRecord>(key)
  if (!record) return null
  await revokeFamily(ctx, record.family, record.userId)
  return record
}

/** Families (sessions) of a user that are still live. */
export async function listUserSessions(ctx: AuthContext, userId: string): Promise<string[]> {
  const prefix = userIndexPrefix(ctx, userId)
  const keys = await ctx.store.backend.keys(prefix)
  return keys.map(k => k.slice(prefix.length)).filter(Boolean)
}

/**
 * Revokes every session of a user (password reset), or every one but `except` (password change
 * keeps the current session). Returns how many were revoked.
 */
export async function revokeUserSessions(ctx: AuthContext, userId: string, options: { except?: string } = {}): Promise<number> {
  const families = (await listUserSessions(ctx, userId)).filter(f => f !== options.except)
  await Promise.all(families.map(family => revokeFamily(ctx, family, userId)))
  return families.length
}
