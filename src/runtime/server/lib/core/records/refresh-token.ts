import type { H3Event } from 'h3'
import { z } from 'zod'
import type { AuthClaims, AuthUser, CustomClaims, ImpersonationContext, SessionRevocationReason } from '../../../../types/auth'
import type { AuthContext } from '../context'
import { createSealer, randomToken } from '../../store/crypto'
import type { RecordKey } from '../../store/record-store'
import { CORE_RECORDS } from './core-records'
import { rotationMarker, sessionEntryOf, storedRefreshToken, type RefreshTokenRecord, type RotationMarker } from './refresh-token-schema'
import type { SessionClient, UpstreamLogin } from './record-schema'
import { storableUser } from './stored-user'
import { listSessionEntries, putSessionEntry, removeSessionEntry, sessionMapKey } from './user-sessions'
import { emitHook } from '../handlers'
import { indexUpstreamLogin, upstreamIndexDue } from './upstream-login'
import { securityEvent } from '../../edge/security-event'

export type { RefreshTokenRecord } from './refresh-token-schema'

const familyRevoked = z.number()

/** HMAC purpose of the key that seals a successor token in its rotation marker. */
const SUCCESSOR_PURPOSE = 'refresh-successor'
/** Rotations followed from a token within its grace period to the session's newest token. */
const MAX_CHAIN = 8

export type RefreshResult
  /** `channel`: the token is one of the other channel (refused, left as it is). */
  = | { status: 'invalid', channel?: TokenChannel }
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

/** Seals the successor of `token` with a key only `token` and the server secret give. */
function sealSuccessor(ctx: AuthContext, token: string, successor: string): string {
  return createSealer(ctx.store.hash(SUCCESSOR_PURPOSE, token)).seal(successor)
}

/** Opens a sealed successor (with the HMAC key of the time it was sealed: current or previous). */
function openSuccessor(ctx: AuthContext, token: string, sealed: string): string | null {
  const [current, ...previous] = ctx.store.hashes(SUCCESSOR_PURPOSE, token) as [string, ...string[]]
  return createSealer(current, previous).open(sealed)
}

/** Writes a token's record after its session's listing entry (a token with `notAfter` leaves the entry as it is). */
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
  /** `native`: a token of the native endpoints (request bodies), never of the cookie. */
  channel?: RefreshTokenRecord['channel']
  ttlSeconds?: number
  /** The OpenID provider login the session starts with (indexed already: {@link indexUpstreamLogin}). */
  upstream?: UpstreamLogin
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
    ...(input.upstream ? { upstream: input.upstream } : {}),
    ...(input.channel ? { channel: input.channel } : {}),
  }
  await storeToken(ctx, token, record, input.ttlSeconds ?? ctx.lifetimes.refresh).catch(async (error: unknown) => {
    // A new session whose token could not be stored does not exist: it is not listed either.
    await removeSessionEntry(ctx, record.userId, record.family).catch(() => {})
    throw error
  })
  return { token, record }
}

/** Seconds a token of `record` lives from now: the refresh lifetime, capped by its own end (`notAfter`). */
export function refreshLifetime(ctx: AuthContext, record: Pick<RefreshTokenRecord, 'notAfter'>): number {
  return record.notAfter === undefined ? ctx.lifetimes.refresh : Math.min(ctx.lifetimes.refresh, (record.notAfter - Date.now()) / 1000)
}

/** True once a record's own end (`notAfter`) has passed. */
const pastItsEnd = (ctx: AuthContext, record: RefreshTokenRecord) => refreshLifetime(ctx, record) <= 0

/** A new refresh token for an existing session (back from an impersonation); null when the session has ended. */
export async function continueSession(ctx: AuthContext, family: string, input: Pick<RefreshTokenInput, 'user' | 'userId' | 'claims' | 'upstream'> & { notAfter?: number }): Promise<{ token: string, record: RefreshTokenRecord } | null> {
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
    ...(input.upstream ? { upstream: input.upstream } : {}),
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

/** How a session's tokens travel: `cookie` (a browser) or `native` (request bodies of the native endpoints). */
export type TokenChannel = 'cookie' | 'native'

/** The channel of a stored token (tokens stored before channels existed are the cookie's). */
export const channelOf = (record: Pick<RefreshTokenRecord, 'channel'>): TokenChannel => record.channel ?? 'cookie'

/** The session a refresh cookie stands for (SSR), within the grace period also after a rotation; never rotates. A native token is none. */
export async function readSessionRecord(ctx: AuthContext, token: string): Promise<RefreshTokenRecord | null> {
  // A token whose record survived a crash mid-rotation counts as rotated.
  const [found, marker] = await Promise.all([readRefreshToken(ctx, token), ctx.store.read(markerKey(ctx, token), rotationMarker)])
  if ((marker?.record ?? found?.record)?.channel === 'native') return null
  if (!marker) return found?.record ?? null
  if (!withinGrace(ctx, Date.now() - marker.at) || pastItsEnd(ctx, marker.record)) return null
  return await isFamilyRevoked(ctx, marker.family) ? null : marker.record
}

/** How {@link rotateRefreshToken} treats a token. */
export interface RotateOptions {
  /** False: answer with the token's record without rotating it (an impersonated session). */
  rotate: (record: RefreshTokenRecord) => boolean
  /** The channel the token came by: a token of the other one is `invalid`, left as it is (neither rotated nor reused). */
  channel?: TokenChannel
  /** The request that brought the token. */
  event?: H3Event
}

/**
 * Redeems a refresh token for its successor through one commit (one concurrent use wins). Uses within
 * `reuseGracePeriod` get the same successor; later ones are reuse of a stolen token and revoke the family
 * (`event`: the request that brought it back).
 */
export async function rotateRefreshToken(ctx: AuthContext, token: string, options: RotateOptions = { rotate: () => true }): Promise<RefreshResult> {
  const key = tokenKey(ctx, token)
  const found = await ctx.store.read(key, storedRefreshToken)
  if (found && pastItsEnd(ctx, found)) return { status: 'invalid' }
  if (found && options.channel && channelOf(found) !== options.channel) return { status: 'invalid', channel: channelOf(found) }
  if (found && !options.rotate(found)) {
    return await isFamilyRevoked(ctx, found.family) ? { status: 'invalid' } : { status: 'ok', record: found, token: undefined }
  }
  if (found) {
    const successor = randomToken(32)
    const now = Date.now()
    // The provider's logout finds the session through indexes that this rotation renews when they are half gone.
    const renew = upstreamIndexDue(ctx, found.upstream, now)
    const record: RefreshTokenRecord = { ...found, issuedAt: now, ...(renew ? { upstream: { ...found.upstream!, indexedAt: now } } : {}) }
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
    if (result === 'claimed') {
      if (renew) await indexUpstreamLogin(ctx, { family: record.family, userId: record.userId }, record.upstream!, now).catch(error => ctx.logger.warn('Could not renew the index of a session by its provider login', error))
      return { status: 'ok', record, token: successor }
    }
    if (result === 'guarded') return { status: 'invalid' }
    // Rotated already (concurrently, or before a crash that kept the record): never live again.
    await ctx.store.remove(key)
  }
  return followRotation(ctx, token, options)
}

/** A use of a token gone or rotated: within the grace period, the session's current token; after, reuse. */
async function followRotation(ctx: AuthContext, token: string, { event, channel }: RotateOptions): Promise<RefreshResult> {
  let marker = await ctx.store.read(markerKey(ctx, token), rotationMarker)
  if (!marker) return { status: 'invalid' }
  if (channel && channelOf(marker.record) !== channel) return { status: 'invalid', channel: channelOf(marker.record) }
  // The clock is read after the marker: a loser of the race is measured against the claim's time.
  const elapsed = Date.now() - marker.at
  if (await isFamilyRevoked(ctx, marker.family)) return { status: 'invalid' }
  if (!withinGrace(ctx, elapsed)) {
    await revokeFamily(ctx, marker.family, marker.userId, 'refresh_token_reused', event)
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

/** Stores a claimed successor again from its marker; the revocation is checked after the write. */
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

/** Revocations that no user asked for: their security event has no actor. */
const UNASKED: ReadonlySet<SessionRevocationReason> = new Set(['host', 'refresh_token_reused', 'provider_logout'])

/** Reasons reported as a `logout` event (the provider's: `details.via: 'backchannel'`). */
const LOGOUTS: ReadonlySet<SessionRevocationReason> = new Set(['logout', 'provider_logout'])

/**
 * Ends a session: access tokens first, then the mark, then the listing, so a failure part-way can be retried.
 * Reported as `logout` or `session.revoked` (an impersonation's end is reported as `impersonation.ended`);
 * `event` is the request that ended it; `caller`, the bearer who ended another user's session (an administrator):
 * the actor of its `session.revoked` event. Of concurrent revocations of one session exactly one writes the mark:
 * it alone reports the event and the hook, and resolves true.
 */
export async function revokeFamily(ctx: AuthContext, family: string, userId: string, reason: SessionRevocationReason, event?: H3Event, caller?: AuthClaims): Promise<boolean> {
  await ctx.revocations?.revoke(family)
  const first = await ctx.store.writeIfAbsent(revokedKey(ctx, family), Date.now(), ctx.lifetimes.refresh)
  await removeSessionEntry(ctx, userId, family)
  if (!first) return false
  if (reason !== 'impersonation') {
    await securityEvent(ctx, event, {
      type: LOGOUTS.has(reason) ? 'logout' : 'session.revoked',
      caller,
      actor: caller ? undefined : UNASKED.has(reason) ? null : userId,
      subject: userId,
      session: family,
      details: LOGOUTS.has(reason) ? { via: reason === 'provider_logout' ? 'backchannel' : undefined } : { reason },
    })
  }
  await emitHook(ctx, 'svc:session:revoked', { sessionId: family, userId, reason })
  for (const feature of ctx.features) {
    await feature.sessionEnded?.(ctx, { userId, sid: family, reason }).catch((error: unknown) => ctx.logger.error(`The ${feature.name} feature failed after a session ended (ignored)`, error))
  }
  return true
}

/**
 * Logout: revokes the session of a token, current or rotated since. Unknown tokens are ignored, and so are
 * tokens of the other channel than `channel` (the cookie's unless given).
 */
export async function revokeRefreshToken(ctx: AuthContext, token: string, event?: H3Event, channel: TokenChannel = 'cookie'): Promise<{ family: string, userId: string } | null> {
  const key = tokenKey(ctx, token)
  const found = await ctx.store.read(key, storedRefreshToken)
  const marker = found ? null : await ctx.store.read(markerKey(ctx, token), rotationMarker)
  const owner = found ?? marker
  if (!owner || channelOf(found ?? marker!.record) !== channel) return null
  // Revoked first, deleted after: a concurrent restore sees the revocation.
  await revokeFamily(ctx, owner.family, owner.userId, 'logout', event)
  await ctx.store.remove(key)
  return { family: owner.family, userId: owner.userId }
}
