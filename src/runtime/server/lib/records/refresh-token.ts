import { z } from 'zod'
import type { AuthUser, CustomClaims, ImpersonationContext } from '../../../types/auth'
import type { AuthContext } from '../context'
import { createSealer, randomToken } from '../crypto'
import { claimsSchema, impersonationContextSchema, timestamp, userSchema } from './schema'
import { storableUser } from './user'

const refreshTokenRecord = z.object({
  family: z.string().min(1),
  userId: z.string().min(1),
  user: userSchema,
  claims: claimsSchema,
  provider: z.string().optional(),
  /** Set for impersonated sessions, which cannot be refreshed. */
  impersonation: impersonationContextSchema.optional(),
  issuedAt: timestamp,
})

/**
 * A stored refresh token. Every token belongs to a family (one login = one session id, `sid` in
 * access tokens); rotation keeps the family and replaces the token.
 */
export type RefreshTokenRecord = z.output<typeof refreshTokenRecord>

/**
 * Left on a token when it is rotated. Written with an atomic set-if-absent, it is the rotation's
 * single claim: whoever writes it decides the one successor of the token. It carries that
 * successor (sealed with a key derived from the rotated token, so the store alone never yields
 * it) and the successor's record (so a crash between the claim and the successor's own write
 * loses nothing).
 */
const rotationMarker = z.object({
  family: z.string().min(1),
  userId: z.string().min(1),
  /** When the rotation was claimed (epoch ms): the grace period runs from here. */
  at: timestamp,
  /** The successor token, sealed (see {@link sealSuccessor}). */
  next: z.string().min(1),
  /** The successor's record as first stored. */
  record: refreshTokenRecord,
})

type RotationMarker = z.output<typeof rotationMarker>

const familyRevoked = z.number()

const TOKEN = 'rt'
const ROTATED = 'rotated'
const REVOKED_FAMILY = 'family-revoked'
const USER_INDEX = 'user'
/** HMAC purpose of the key that seals a successor token in its rotation marker. */
const SUCCESSOR_PURPOSE = 'refresh-successor'
/** Rotations followed from a token within its grace period to the session's newest token. */
const MAX_CHAIN = 8

export type RefreshResult =
  | { status: 'invalid' }
  | { status: 'reused', family: string, userId: string }
  /** `token`: the refresh token the cookie must hold now (undefined: keep the cookie as it is). */
  | { status: 'ok', record: RefreshTokenRecord, token: string | undefined }

export interface ReadRefreshToken {
  key: string
  record: RefreshTokenRecord
}

const tokenKey = (ctx: AuthContext, token: string) => ctx.store.key(TOKEN, token)
const markerKey = (ctx: AuthContext, token: string) => ctx.store.key(ROTATED, token)

function userIndexPrefix(ctx: AuthContext, userId: string): string {
  return `${ctx.store.key(USER_INDEX, userId)}:`
}

async function isFamilyRevoked(ctx: AuthContext, family: string): Promise<boolean> {
  return (await ctx.store.read(ctx.store.key(REVOKED_FAMILY, family), familyRevoked)) !== null
}

/**
 * Seals the successor of `token` with a key only `token` and the server secret give (an HMAC of
 * the rotated token, which the store never holds in clear).
 */
function sealSuccessor(ctx: AuthContext, token: string, successor: string): string {
  return createSealer(ctx.store.hash(SUCCESSOR_PURPOSE, token)).seal(successor)
}

function openSuccessor(ctx: AuthContext, token: string, sealed: string): string | null {
  return createSealer(ctx.store.hash(SUCCESSOR_PURPOSE, token)).open(sealed)
}

/** Writes a token's record and the user's index entry of its family. */
async function storeToken(ctx: AuthContext, token: string, record: RefreshTokenRecord, ttl: number = ctx.lifetimes.refresh): Promise<void> {
  await Promise.all([
    ctx.store.write(tokenKey(ctx, token), record, ttl),
    ctx.store.write(`${userIndexPrefix(ctx, record.userId)}${record.family}`, { family: record.family, at: record.issuedAt }, ttl),
  ])
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
  await storeToken(ctx, token, record, input.ttlSeconds ?? ctx.lifetimes.refresh)
  return { token, record }
}

/** Looks a token up without consuming it. Null when unknown, expired, malformed or revoked. */
export async function readRefreshToken(ctx: AuthContext, token: string): Promise<ReadRefreshToken | null> {
  const key = tokenKey(ctx, token)
  const record = await ctx.store.read(key, refreshTokenRecord)
  if (!record) return null
  if (await isFamilyRevoked(ctx, record.family)) return null
  return { key, record }
}

/**
 * Uses a refresh token: validates it, then rotates it.
 *
 * The first use claims the rotation with an atomic set-if-absent of the rotation marker, which
 * names the one successor; of any number of concurrent uses (also across processes on Redis)
 * exactly one writes it. Every use of the same token within `reuseGracePeriod` seconds of the
 * claim (a second tab, a retry after a lost answer or a crash) is answered with that same
 * successor. Any later use is reuse of a stolen token: the whole family is revoked. With a grace
 * period of 0 only the first use succeeds.
 */
export async function useRefreshToken(ctx: AuthContext, token: string, options: { rotate: (record: RefreshTokenRecord) => boolean } = { rotate: () => true }): Promise<RefreshResult> {
  const found = await readRefreshToken(ctx, token)
  if (found) {
    if (!options.rotate(found.record)) return { status: 'ok', record: found.record, token: undefined }
    const successor = randomToken(32)
    const record: RefreshTokenRecord = { ...found.record, issuedAt: Date.now() }
    const marker: RotationMarker = { family: record.family, userId: record.userId, at: Date.now(), next: sealSuccessor(ctx, token, successor), record }
    if (await ctx.store.writeIfAbsent(markerKey(ctx, token), marker, ctx.lifetimes.refresh)) {
      await Promise.all([storeToken(ctx, successor, record), ctx.store.remove(found.key)])
      return { status: 'ok', record, token: successor }
    }
  }
  return followRotation(ctx, token)
}

/**
 * A use of a token that is gone or already rotated: within the grace period of its rotation, the
 * session's current token (the successor, or the successor's successor after further rotations);
 * after it, reuse.
 */
async function followRotation(ctx: AuthContext, token: string): Promise<RefreshResult> {
  let marker = await ctx.store.read(markerKey(ctx, token), rotationMarker)
  if (!marker) return { status: 'invalid' }
  // The clock is read after the marker: a use that lost the race to the claim is measured
  // against the claim's own time, never ahead of it.
  const elapsed = Date.now() - marker.at
  if (await isFamilyRevoked(ctx, marker.family)) return { status: 'invalid' }
  const grace = ctx.options.tokenRefresh.reuseGracePeriod * 1000
  if (!(grace > 0 && elapsed <= grace)) {
    await revokeFamily(ctx, marker.family, marker.userId)
    return { status: 'reused', family: marker.family, userId: marker.userId }
  }
  let current = token
  for (let hop = 0; hop < MAX_CHAIN; hop++) {
    const successor = openSuccessor(ctx, current, marker.next)
    if (!successor) return { status: 'invalid' }
    const live = await readRefreshToken(ctx, successor)
    if (live) return { status: 'ok', record: live.record, token: successor }
    const next = await ctx.store.read(markerKey(ctx, successor), rotationMarker)
    if (!next) return restoreSuccessor(ctx, successor, marker.record)
    current = successor
    marker = next
  }
  ctx.logger.warn(`A refresh token was rotated more than ${MAX_CHAIN} times within the grace period; the old token is refused`)
  return { status: 'invalid' }
}

/**
 * A successor that was claimed but never stored (the server stopped between the claim and the
 * write, or a logout took it): stored again from its marker, with what is left of its lifetime,
 * unless its session has been revoked. The revocation is checked after the write, so a logout
 * that runs meanwhile (it revokes before it deletes) is never undone.
 */
async function restoreSuccessor(ctx: AuthContext, successor: string, record: RefreshTokenRecord): Promise<RefreshResult> {
  const left = (record.issuedAt + ctx.lifetimes.refresh * 1000 - Date.now()) / 1000
  if (left <= 0) return { status: 'invalid' }
  await storeToken(ctx, successor, record, left)
  if (await isFamilyRevoked(ctx, record.family)) {
    await Promise.all([ctx.store.remove(tokenKey(ctx, successor)), ctx.store.remove(`${userIndexPrefix(ctx, record.userId)}${record.family}`)])
    return { status: 'invalid' }
  }
  return { status: 'ok', record, token: successor }
}

/**
 * Marks a family revoked: none of its tokens refreshes any more. The mark is written before the
 * user's index entry goes, so the session is never unlisted while still live.
 */
export async function revokeFamily(ctx: AuthContext, family: string, userId: string): Promise<void> {
  await ctx.store.write(ctx.store.key(REVOKED_FAMILY, family), Date.now(), ctx.lifetimes.refresh)
  await ctx.store.remove(`${userIndexPrefix(ctx, userId)}${family}`)
}

/**
 * Logout: revokes the session (family) of a token, whether the token is the session's current one
 * (its record is deleted) or an older one that was rotated since (its rotation marker names the
 * family). Unknown tokens are ignored. Returns the family and user of the revoked session.
 */
export async function revokeRefreshToken(ctx: AuthContext, token: string): Promise<{ family: string, userId: string } | null> {
  const key = tokenKey(ctx, token)
  const owner = await ctx.store.read(key, refreshTokenRecord) ?? await ctx.store.read(markerKey(ctx, token), rotationMarker)
  if (!owner) return null
  // Revoked first, deleted after: a concurrent retry that restores a token of the session sees
  // the revocation (see restoreSuccessor).
  await revokeFamily(ctx, owner.family, owner.userId)
  await ctx.store.remove(key)
  return { family: owner.family, userId: owner.userId }
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
