/** Access tokens for tests, signed without HTTP with the app's key by the module's own code: the tokens the app issues. */
import type { H3Event } from 'h3'
import type { AuthClaims, CustomClaims } from '../runtime/types/auth'
import type { Duration, ModuleOptions } from '../runtime/types/options'
import { authenticate, authenticationError } from '../runtime/server/lib/core/authenticate'
import { buildAccessClaims, sanitizeCustomClaims } from '../runtime/server/lib/core/claims'
import { createAuthContext, type AuthContext } from '../runtime/server/lib/core/context'
import { randomToken } from '../runtime/server/lib/store/crypto'
import { customClaimsOf, impersonationContext } from '../runtime/impersonation/server/impersonate'
import { createTokenService, type TokenService } from '../runtime/server/lib/core/tokens'
import { loadAuthOptions, type AuthOptionsSource } from './test-options'

/** A user to sign a token for: `sub`, identity claims, and any other key as a custom claim (`{ sub: 'u1', role: 'admin' }`). */
export interface TestUser {
  /** The user's id: the token's `sub`. */
  sub: string
  email?: string
  name?: string
  picture?: string
  /** The `provider` claim. */
  provider?: string
  [claim: string]: unknown
}

/** Options of {@link TestAuth.mint}. */
export interface MintOptions {
  /** Custom claims on top of the user's own keys. @default {} */
  claims?: Record<string, unknown>
  /** The `provider` claim (over `user.provider`). @default user.provider */
  provider?: string
  /** Session id (`sid` claim); real tokens always name their session. @default a random id */
  sid?: string
  /** Lifetime. @default the configured `token.expiresIn` */
  expiresIn?: Duration
}

/** Options of {@link TestAuth.mintImpersonated}. */
export interface MintImpersonatedOptions {
  /** Why, as given at POST /auth/impersonate. @default none */
  reason?: string
  /** Custom claims of the target on top of its own keys. @default {} */
  claims?: Record<string, unknown>
  /** Lifetime. @default the configured `impersonation.tokenExpiration` */
  expiresIn?: Duration
}

/** A signed access token. */
export interface MintedToken {
  /** The JWT. */
  token: string
  /** Its claims, exactly as signed. */
  claims: AuthClaims
  /** Lifetime in seconds. */
  expiresIn: number
  /** `{ authorization: 'Bearer <token>' }`, for a request or a fake event. */
  headers: { authorization: string }
}

/** Token helpers bound to one configuration (see {@link createTestAuth}). */
export interface TestAuth {
  /** The module options in use (the app's runtime config). Holds secrets: do not print it. */
  readonly options: ModuleOptions
  /** Signs an access token for `user`, as POST /auth/token would issue it. */
  mint(user: TestUser, options?: MintOptions): Promise<MintedToken>
  /** Signs the token POST /auth/impersonate would issue when `requester` impersonates `target`. */
  mintImpersonated(target: TestUser, requester: TestUser, options?: MintImpersonatedOptions): Promise<MintedToken>
  /** The claims of a valid token, or null: the module's own verification. */
  verify(token: string): Promise<AuthClaims | null>
  /** `getAuthUser(event)` of the module for these options (also sets `event.context.user`). */
  getAuthUser(event: H3Event): Promise<AuthClaims | undefined>
  /** `requireAuthUser(event)` of the module for these options: the claims, or a 401 error. */
  requireAuthUser(event: H3Event): Promise<AuthClaims>
  /** Releases what `getAuthUser` / `requireAuthUser` created. */
  dispose(): Promise<void>
}

/** A user's claims as the app would sign them: identity from the user, the rest as custom claims. */
function userClaims(user: TestUser, provider: string | undefined, extra: Record<string, unknown> | undefined, session: { sid?: string, impersonation?: unknown }): Record<string, unknown> {
  if (typeof user?.sub !== 'string' || user.sub === '') throw new TypeError('nuxt-svc-auth/testing: the user needs a non-empty string `sub`')
  const custom: CustomClaims = { ...customClaimsOf(user), ...sanitizeCustomClaims(extra ?? {}) }
  return buildAccessClaims(user, provider ?? user.provider, custom, session)
}

/** Token helpers for the configuration of `source` (default: the app in the current directory); no server, no HTTP. */
export async function createTestAuth(source: AuthOptionsSource = {}): Promise<TestAuth> {
  const options = await loadAuthOptions(source)
  const tokens: TokenService = await createTokenService(options.token)
  let context: Promise<AuthContext> | undefined
  // Verifying needs no storage: the context of getAuthUser runs on memory.
  const useContext = () => context ??= createAuthContext({ ...options, tokenRefresh: { ...options.tokenRefresh, storage: { ...options.tokenRefresh.storage, driver: 'memory' } }, logging: { ...options.logging, level: 'silent' } })

  const minted = async (claims: Record<string, unknown>, expiresIn: Duration | undefined): Promise<MintedToken> => {
    const signed = await tokens.sign(claims, { expiresIn })
    return { token: signed.token, claims: signed.payload, expiresIn: signed.expiresIn, headers: { authorization: `Bearer ${signed.token}` } }
  }

  return {
    options,
    async mint(user, o = {}) {
      return minted(userClaims(user, o.provider, o.claims, { sid: o.sid ?? randomToken(16) }), o.expiresIn)
    },
    async mintImpersonated(target, requester, o = {}) {
      const requesterClaims = userClaims(requester, undefined, undefined, {}) as AuthClaims
      const context = impersonationContext(requesterClaims, options.impersonation.originalUserLookupClaim, o.reason, new Date())
      const claims = userClaims(target, undefined, o.claims, { sid: `imp_${randomToken(16)}`, impersonation: context })
      return minted(claims, o.expiresIn ?? options.impersonation.tokenExpiration)
    },
    verify: token => tokens.verify(token),
    getAuthUser: async event => authenticate(event, await useContext()),
    async requireAuthUser(event) {
      const user = await authenticate(event, await useContext())
      if (!user) throw authenticationError(event)
      return user
    },
    async dispose() {
      const pending = context
      context = undefined
      if (pending) await (await pending).dispose()
    },
  }
}

/** One access token for `user`: `const { headers } = await mintAccessToken({ sub: 'u1', role: 'admin' })`. */
export async function mintAccessToken(user: TestUser, options: MintOptions & AuthOptionsSource = {}): Promise<MintedToken> {
  const { claims, provider, sid, expiresIn, ...source } = options
  const auth = await createTestAuth(source)
  return auth.mint(user, { claims, provider, sid, expiresIn })
}
