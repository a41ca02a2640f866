import { z } from 'zod'
import type { AuthContext } from '../../server/lib/core/context'
import { recordTypes } from '../../server/lib/store/record-types'
import { timestamp } from '../../server/lib/core/records/record-schema'

/** The OAuth flow's record kinds (see store/record-types.ts). */
export const OAUTH_RECORDS = recordTypes({
  oauthState: 'oauth-state',
  mockCode: 'mock-code',
  mockToken: 'mock-token',
  /** The `jti` of a back-channel logout token, kept until the token expires (backchannel-logout.ts). */
  logoutToken: 'logout-token',
})

const oauthStateRecord = z.object({
  provider: z.string(),
  redirectUri: z.string(),
  /** Same-origin path chosen at the start of the login. */
  redirect: z.string().optional(),
  /** HMAC of the binding (code cookie) of the browser that started the login. */
  binding: z.string().min(1),
  /** A native app's login (RFC 8252): where the code or the error goes, and the PKCE challenge the code is bound to. */
  native: z.object({ redirectUri: z.string(), codeChallenge: z.string(), state: z.string().optional() }).optional(),
  /** A signed-in user's link of the provider's identity to their account (POST <authPath>/link/:provider) instead of a login. */
  link: z.object({ userId: z.string(), sid: z.string().optional(), redirect: z.string() }).optional(),
  createdAt: timestamp,
})

/** The native app a login returns to (see {@link OAuthStateRecord}). */
export type NativeReturn = NonNullable<OAuthStateRecord['native']>

/** What a started provider login keeps server side: single use, keyed by its `state`. */
export type OAuthStateRecord = z.output<typeof oauthStateRecord>

export async function saveOAuthState(ctx: AuthContext, state: string, record: Omit<OAuthStateRecord, 'createdAt'>, ttlSeconds: number): Promise<void> {
  await ctx.store.write(ctx.store.key(OAUTH_RECORDS.oauthState, state), { ...record, createdAt: Date.now() }, ttlSeconds)
}

/** Consumes the record of a state atomically: of concurrent callbacks, exactly one gets it. */
export function takeOAuthState(ctx: AuthContext, state: string): Promise<OAuthStateRecord | null> {
  return ctx.store.take(ctx.store.key(OAUTH_RECORDS.oauthState, state), oauthStateRecord)
}
