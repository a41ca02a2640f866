import { z } from 'zod'
import type { AuthUser, CustomClaims, ImpersonationContext, SessionRevocationReason } from '../../../../types/auth'
import type { AuthContext } from '../context'
import { createSealer, randomToken } from '../../store/crypto'
import type { RecordKey } from '../../store/record-store'
import { CORE_RECORDS } from './core-records'
import { rotationMarker, sessionEntryOf, storedRefreshToken, type RefreshTokenRecord, type RotationMarker } from './refresh-token-schema'
import type { SessionClient } from './record-schema'
import { storableUser } from './stored-user'
import { listSessionEntries, putSessionEntry, removeSessionEntry, sessionMapKey } from './user-sessions'
import { emitHook } from '../handlers'

export type { RefreshTokenRecord } from './refresh-token-schema'

const familyRevoked = z.number()

/** HMAC purpose of the key that seals a successor token in its rotation marker. */
const SUCCESSOR_PURPOSE = 'refresh-successor'
/** Rotations followed from a token within its grace period to the session's newest token. */
const MAX_CHAIN = 8

export type RefreshResult
  = | { status: 'invalid' }
    | { status: 'reused', family: string, userId: string }
  /** `token`: the refresh token the cookie must hold now (undefined: keep the cookie as it is). */
    | { status: 'ok', record: RefreshTokenRecord, token: string | undefined }

export interface ReadRefreshToken {
  key: RecordKey
  record: RefreshTokenRecord
}

const tokenKey = (ctx: AuthContext, token: string) => ctx.store.key(CORE_RECORDS.refreshToken, token)
const markerKey = (ctx: AuthContext, token: string) => ctx.store.key(CORE_RECORDS.rotatedRefreshToken, token)
const revokedKey = (ctx: AuthContext, family: string) => ctx.store.key(CORE_RECORDS.revokedFamily, family)

/** True when the session (family) has been revoked (logout, reuse, a password reset, ...). */
export async function isFamilyRevoked(ctx: AuthContext, family: string): Promise<boolean> {
  return (await ctx.store.read(revokedKey(ctx, family), familyRevoked)) !== null
}

/**
 * Seals the successor of `token` with a key only `token` and the server secret give (an HMAC of
 * the rotated token, which the store never holds in clear).
 */
function sealSuccessor(ctx: AuthContext, token: string, successor: string): string {
  return createSealer(ctx.store.hash(SUCCESSOR_PURPOSE, token)).seal(successor)
}

/** Opens a sealed successor (with the HMAC key of the time it was sealed: current or previous). */
function openSuccessor(ctx: AuthContext, token: string, sealed: string): string | null {
  const [current, ...previous] = ctx.store.hashes(SUCCESSOR_PURPOSE, token) as [string, ...string[]]
  return createSealer(current, previous).open(sealed)
}

/**
 * Writes a token's record and, first, the session's entry in its user's session map (so a live
 * token is never missing from the map). A token with an end of its own (`notAfter`) sits beside
 * the session's own token and leaves the entry as it is: its shorter lifetime must not shorten
 * the session's listing.
 */
async function storeToken(ctx: AuthContext, token: string, record: RefreshTokenRecord, ttl: number = ctx.lifetimes.refresh): Promise<void> {
  if (record.notAfter === undefined) await putSessionEntry(ctx, record.userId, record.family, sessionEntryOf(record), ttl)
  await ctx.store.write(tokenKey(ctx, token), record, ttl)
}

/** What a new refresh token stands for. */
export interface RefreshTokenInput {
  /** The session (family): a new one unless given. */
  family?: string
  user: AuthUser
  userId: string
  claims: CustomClaims
  provider?: string
  impersonation?: ImpersonationContext
  client?: SessionClient
  ttlSeconds?: number
}

/** Stores a new refresh token (new family unless one is given) and returns it. */
export async function issueRefreshToken(ctx: AuthContext, input: RefreshTokenInput): Promise<{ token: string, record: RefreshTokenRecord }> {
  const token = randomToken(32)
  const now = Date.now()
  const record: RefreshTokenRecord = {
    family: input.family ?? randomToken(16),
    userId: input.userId,
    user: storableUser(input.user),
    claims: input.claims,
    provider: input.provider,
    impersonation: input.impersonation,
    issuedAt: now,
    createdAt: now,
    client: input.client,
  }
  await storeToken(ctx, token, record, input.ttlSeconds ?? ctx.lifetimes.refresh).catch(async (error: unknown) => {
    // A new session whose token could not be stored does not exist: it is not listed either.
    await removeSessionEntry(ctx, record.userId, record.family).catch(() => {})
    throw error
  })
  return { token, record }
}

/**
 * Seconds a token of `record` lives from now: the refresh lifetime, or less when the record has an
 * end of its own (`notAfter`); 0 or less once that has passed.
 */
export function refreshLifetime(ctx: AuthContext, record: Pick<RefreshTokenRecord, 'notAfter'>): number {
  return record.notAfter === undefined ? ctx.lifetimes.refresh : Math.min(ctx.lifetimes.refresh, (record.notAfter - Date.now()) / 1000)
}

/** True once a record's own end (`notAfter`) has passed. */
const pastItsEnd = (ctx: AuthContext, record: RefreshTokenRecord) => refreshLifetime(ctx, record) <= 0

/**
 * A new refresh token for a session that exists already (the way back from an impersonation):
 * the same family, login time, provider and client as the session's entry in its user's map, the
 * given user and claims, and `notAfter` when given. Null, and nothing stored, when the session has
 * ended (revoked, expired, or never existed), also when it ends while the token is being stored,
 * and when `notAfter` has passed.
 */
export async function continueSession(ctx: AuthContext, family: string, input: Pick<RefreshTokenInput, 'user' | 'userId' | 'claims'> & { notAfter?: number }): Promise<{ token: string, record: RefreshTokenRecord } | null> {
  const entry = (await listSessionEntries(ctx, input.userId)).find(candidate => candidate.id === family)
  if (!entry || await isFamilyRevoked(ctx, family)) return null
  const token = randomToken(32)
  const record: RefreshTokenRecord = {
    family,
    userId: input.userId,
    user: storableUser(input.user),
    claims: input.claims,
    provider: entry.provider,
    issuedAt: Date.now(),
    createdAt: entry.createdAt,
    client: entry.client,
    ...(input.notAfter === undefined ? {} : { notAfter: input.notAfter }),
  }
  if (pastItsEnd(ctx, record)) return null
  await storeToken(ctx, token, record, refreshLifetime(ctx, record))
  // Checked after the write, as a restore does: a logout that ran meanwhile is never undone.
  if (await isFamilyRevoked(ctx, family)) {
    await Promise.all([discardRefreshToken(ctx, token), removeSessionEntry(ctx, input.userId, family)])
    return null
  }
  return { token, record }
}

/** Deletes one refresh token, leaving its session as it is (a token handed out nowhere, a retired cookie). */
export async function discardRefreshToken(ctx: AuthContext, token: string): Promise<void> {
  await ctx.store.remove(tokenKey(ctx, token))
}

/** Looks a token up without consuming it. Null when unknown, expired, malformed or revoked. */
export async function readRefreshToken(ctx: AuthContext, token: string): Promise<ReadRefreshToken | null> {
  const key = tokenKey(ctx, token)
  const record = await ctx.store.read(key, storedRefreshToken)
  if (!record || pastItsEnd(ctx, record)) return null
  if (await isFamilyRevoked(ctx, record.family)) return null
  return { key, record }
}

/** True when a use `elapsedMs` after a rotation's claim is within `reuseGracePeriod` (never with 0). */
function withinGrace(ctx: AuthContext, elapsedMs: number): boolean {
  const grace = ctx.options.tokenRefresh.reuseGracePeriod * 1000
  return grace > 0 && elapsedMs <= grace
}

/**
 * The session a refresh cookie stands for, read only (server-side rendering): the token's record,
 * or, for a token rotated within the grace period (a page load sent while a refresh was being
 * answered still carries the old cookie), the record its rotation handed to the successor. Null
 * when unknown, revoked or rotated longer ago; never counts as reuse and never rotates.
 */
export async function readSessionRecord(ctx: AuthContext, token: string): Promise<RefreshTokenRecord | null> {
  // The marker is read too: a token whose record survived a crash in the middle of its rotation
  // is rotated all the same, and counts only within the grace period.
  const [found, marker] = await Promise.all([readRefreshToken(ctx, token), ctx.store.read(markerKey(ctx, token), rotationMarker)])
  if (!marker) return found?.record ?? null
  if (!withinGrace(ctx, Date.now() - marker.at) || pastItsEnd(ctx, marker.record)) return null
  return await isFamilyRevoked(ctx, marker.family) ? null : marker.record
}

/**
 * Redeems a refresh token for its successor: validates it, then rotates it (unless `rotate` says
 * no for its record; the answer then carries no new token).
 *
 * The first use claims the rotation by creating the rotation marker, which names the one
 * successor; of any number of concurrent uses (also across processes on Redis) exactly one
 * creates it. The marker carries the successor's record and is stored under the successor's key
 * and as the session's map entry too, and the rotated token is removed, in one commit of the
 * store (one script on Redis, one durable file with hard links on fs): see `RecordCommit`. The
 * session's revocation mark guards it. Every use of the same token within `reuseGracePeriod`
 * seconds of the claim (a second tab, a retry after a lost answer or a crash) is answered with
 * that same successor. Any later use is reuse of a stolen token: the whole family is revoked.
 * With a grace period of 0 only the first use succeeds.
 */
export async function rotateRefreshToken(ctx: AuthContext, token: string, options: { rotate: (record: RefreshTokenRecord) => boolean } = { rotate: () => true }): Promise<RefreshResult> {
  const key = tokenKey(ctx, token)
  const found = await ctx.store.read(key, storedRefreshToken)
  if (found && pastItsEnd(ctx, found)) return { status: 'invalid' }
  if (found && !options.rotate(found)) {
    return await isFamilyRevoked(ctx, found.family) ? { status: 'invalid' } : { status: 'ok', record: found, token: undefined }
  }
  if (found) {
    const successor = randomToken(32)
    const now = Date.now()
    const record: RefreshTokenRecord = { ...found, issuedAt: now }
    const marker: RotationMarker = { family: record.family, userId: record.userId, at: now, next: sealSuccessor(ctx, token, successor), record }
    const ttlSeconds = refreshLifetime(ctx, record)
    const result = await ctx.store.commit({
      guards: [revokedKey(ctx, record.family)],
      claim: { key: markerKey(ctx, token), value: marker, ttlSeconds },
      copies: [tokenKey(ctx, successor)],
      // As in storeToken: a token with an end of its own leaves the session's entry as it is.
      mapCopies: record.notAfter === undefined ? [{ key: sessionMapKey(ctx, record.userId), field: record.family }] : [],
      deletes: [key],
    })
    if (result === 'claimed') return { status: 'ok', record, token: successor }
    if (result === 'guarded') return { status: 'invalid' }
    // Rotated already: by a concurrent use (which removes this record too), or before a crash
    // that kept the record. It is never read as a live token again.
    await ctx.store.remove(key)
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
  if (!withinGrace(ctx, elapsed)) {
    await revokeFamily(ctx, marker.family, marker.userId, 'refresh_token_reused')
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
  const left = Math.min((record.issuedAt + ctx.lifetimes.refresh * 1000 - Date.now()) / 1000, refreshLifetime(ctx, record))
  if (left <= 0) return { status: 'invalid' }
  await storeToken(ctx, successor, record, left)
  if (await isFamilyRevoked(ctx, record.family)) {
    await Promise.all([ctx.store.remove(tokenKey(ctx, successor)), removeSessionEntry(ctx, record.userId, record.family)])
    return { status: 'invalid' }
  }
  return { status: 'ok', record, token: successor }
}

/**
 * Ends a session (token family): none of its refresh tokens refreshes any more and, unless
 * `sessions.revokeAccessTokens` is off, its access tokens are refused on every process within
 * moments. Then `svc:session:revoked` runs (its failure is logged, never undoes the revocation).
 *
 * Order: the access tokens first (stored and broadcast), then the session's mark, then the user's
 * map entry. A failure part-way leaves the session listed and live for a retry to end it
 * completely; once marked, the session counts as ended and a retry does not come back to it.
 */
export async function revokeFamily(ctx: AuthContext, family: string, userId: string, reason: SessionRevocationReason): Promise<void> {
  await ctx.revocations?.revoke(family)
  await ctx.store.write(ctx.store.key(CORE_RECORDS.revokedFamily, family), Date.now(), ctx.lifetimes.refresh)
  await removeSessionEntry(ctx, userId, family)
  ctx.logger.security('session_revoked', { family, reason })
  await emitHook(ctx, 'svc:session:revoked', { sessionId: family, userId, reason })
}

/**
 * Logout: revokes the session (family) of a token, whether the token is the session's current one
 * (its record is deleted) or an older one that was rotated since (its rotation marker names the
 * family). Unknown tokens are ignored. Returns the family and user of the revoked session.
 */
export async function revokeRefreshToken(ctx: AuthContext, token: string): Promise<{ family: string, userId: string } | null> {
  const key = tokenKey(ctx, token)
  const owner = await ctx.store.read(key, storedRefreshToken) ?? await ctx.store.read(markerKey(ctx, token), rotationMarker)
  if (!owner) return null
  // Revoked first, deleted after: a concurrent retry that restores a token of the session sees
  // the revocation (see restoreSuccessor).
  await revokeFamily(ctx, owner.family, owner.userId, 'logout')
  await ctx.store.remove(key)
  return { family: owner.family, userId: owner.userId }
}
