import { z } from 'zod'
import { claimsSchema, impersonationContextSchema, sessionClientSchema, timestamp, userSchema } from './record-schema'

/*
 * The stored shapes of a session's refresh tokens, shared by the token records and the user's
 * session map (a rotation stores its marker under the successor's key and in the map).
 */

export const refreshTokenRecord = z.object({
  family: z.string().min(1),
  userId: z.string().min(1),
  user: userSchema,
  claims: claimsSchema,
  provider: z.string().optional(),
  /** Set for impersonated sessions, which cannot be refreshed. */
  impersonation: impersonationContextSchema.optional(),
  /** When this token was issued (login, or the rotation that made it). */
  issuedAt: timestamp,
  /** When the session (family) started. */
  createdAt: timestamp,
  /** Coarse description of the client that started the session (see `describeClient`). */
  client: sessionClientSchema.optional(),
  /**
   * When this token and every token rotated from it end at the latest (epoch ms): set on a token
   * derived from an access token alone (the way back from an impersonation started with a bearer
   * alone), which must not outlive that access token.
   */
  notAfter: timestamp.optional(),
})

/**
 * A stored refresh token. Every token belongs to a family (one login = one session id, `sid` in
 * access tokens); rotation keeps the family and replaces the token.
 */
export type RefreshTokenRecord = z.output<typeof refreshTokenRecord>

/**
 * Left on a token when it is rotated. Created atomically, it is the rotation's single claim:
 * whoever creates it decides the one successor of the token. It carries that successor (sealed
 * with a key derived from the rotated token, so the store alone never yields it) and the
 * successor's record. The same value is stored under the successor's key and as the session's
 * entry in its user's map (one durable write on fs: hard links of one file), so a crash between
 * the claim and any other write loses nothing.
 */
export const rotationMarker = z.object({
  family: z.string().min(1),
  userId: z.string().min(1),
  /** When the rotation was claimed (epoch ms): the grace period runs from here. */
  at: timestamp,
  /** The successor token, sealed. */
  next: z.string().min(1),
  /** The successor's record. */
  record: refreshTokenRecord,
})

export type RotationMarker = z.output<typeof rotationMarker>

/** What a token's key holds: its own record (login, a restore), or the marker of the rotation that made it. */
export const storedRefreshToken = z.union([rotationMarker.transform(marker => marker.record), refreshTokenRecord])

/** A session's entry in its user's map (the `lastUsedAt` of a session is its newest token's `issuedAt`). */
export const sessionEntry = z.object({
  createdAt: timestamp,
  lastUsedAt: timestamp,
  provider: z.string().optional(),
  client: sessionClientSchema.optional(),
  /** Set on impersonated sessions: the `sub` of the user impersonating. */
  impersonatedBy: z.string().optional(),
})

/** The session's entry in its user's map, as of a token's record. */
export function sessionEntryOf(record: RefreshTokenRecord): z.output<typeof sessionEntry> {
  return {
    createdAt: record.createdAt,
    lastUsedAt: record.issuedAt,
    provider: record.provider,
    client: record.client,
    impersonatedBy: record.impersonation?.originalUserSub,
  }
}

/** What a session's map entry holds: the entry written at login (or a restore), or the marker of its newest rotation. */
export const storedSessionEntry = z.union([rotationMarker.transform(marker => sessionEntryOf(marker.record)), sessionEntry])
