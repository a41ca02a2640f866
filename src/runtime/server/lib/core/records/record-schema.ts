import { z } from 'zod'
import type { AuthUser, CustomClaims, ImpersonationContext } from '../../../../types/auth'

/** A plain JSON object (not an array, not null), typed as `T` without checking its keys. */
export function jsonObject<T extends object>() {
  return z.custom<T>(value => typeof value === 'object' && value !== null && !Array.isArray(value))
}

/** A stored user copy (see `storableUser`). */
export const userSchema = jsonObject<AuthUser>()

/** Custom claims, already limited to JSON values when they were stored. */
export const claimsSchema = jsonObject<CustomClaims>()

/** The `impersonation` claim of an impersonated session. */
export const impersonationContextSchema = z.custom<ImpersonationContext>(value =>
  typeof value === 'object' && value !== null
  && typeof (value as ImpersonationContext).originalUserSub === 'string'
  && typeof (value as ImpersonationContext).originalUserLookupId === 'string'
  && typeof (value as ImpersonationContext).impersonatedAt === 'string')

/** Epoch milliseconds. */
export const timestamp = z.number()

/** A coarse description of the client that started a session. Nothing secret. */
export const sessionClientSchema = z.object({
  /** Browser and system family, e.g. `Firefox on Linux` (no versions). */
  userAgent: z.string().max(64).optional(),
  /** Network prefix of the address: `/24` for IPv4, `/48` for IPv6. */
  address: z.string().max(64).optional(),
})

export type SessionClient = z.output<typeof sessionClientSchema>

/**
 * The OpenID provider login a session started with: kept in the session's refresh tokens (the ID token is
 * the `id_token_hint` of a logout at the provider) and indexed by the provider's `sid` and `sub` (a
 * back-channel logout names the provider's session or user, never ours).
 */
export const upstreamLoginSchema = z.object({
  /** Provider name (`keycloak`, a custom name). */
  provider: z.string().min(1),
  /** The provider's `sub` of the user. */
  sub: z.string().min(1),
  /** The provider's session id (`sid` of the ID token), when it gives one. */
  sid: z.string().min(1).optional(),
  /** The ID token of the login. */
  idToken: z.string().min(1),
  /** When the indexes were last written (epoch ms); a rotation renews them after half their lifetime. */
  indexedAt: z.number().optional(),
})

/** The provider login of a session ({@link upstreamLoginSchema}). */
export type UpstreamLogin = z.output<typeof upstreamLoginSchema>
