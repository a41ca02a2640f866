import { z } from 'zod'
import { claimsSchema, impersonationContextSchema, sessionClientSchema, timestamp, upstreamLoginSchema, userSchema } from './record-schema'

/** Stored shapes of refresh tokens, shared by the token records and the user's session map. */

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
  /** Latest end (epoch ms) of this token and its successors: set when derived from an access token alone. */
  notAfter: timestamp.optional(),
  /** The OpenID provider login the session started with (its ID token, the provider's `sid` and `sub`). */
  upstream: upstreamLoginSchema.optional(),
  /** `native`: the token travels in request bodies (native endpoints) and never in the cookie; absent: the cookie only. */
  channel: z.literal('native').optional(),
})

/** A stored refresh token; every token belongs to a family (one login, `sid`), kept by rotation. */
export type RefreshTokenRecord = z.output<typeof refreshTokenRecord>

/** Left on a rotated token: the single atomic claim naming its one (sealed) successor and carrying its record. */
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
