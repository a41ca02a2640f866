import type { H3Event } from 'h3'
import { z } from 'zod'
import type { AuthUser } from '../../../../types/auth'
import { browserBindingOf } from '../code-binding'
import type { AuthContext } from '../context'
import { randomToken } from '../../store/crypto'
import { CORE_RECORDS } from './core-records'
import { claimsSchema, timestamp, userSchema } from './record-schema'
import { storableUser } from './stored-user'
import { upstreamLoginSchema, type UpstreamLogin } from './record-schema'

const authCodeRecord = z.object({
  user: userSchema,
  claims: claimsSchema,
  provider: z.string().optional(),
  /** Same-origin path chosen at login, returned to the callback page. */
  redirect: z.string().optional(),
  /** HMAC of the browser binding; absent only for codes issued with `bindToBrowser: false` or to a native app. */
  binding: z.string().optional(),
  /** A native app's PKCE S256 challenge: the code is bound to it instead of a browser (the native token endpoint only). */
  codeChallenge: z.string().optional(),
  /** What proved a second factor: a TOTP `code`, a `recovery_code`, or a `passkey` with user verification. */
  secondFactor: z.enum(['code', 'recovery_code', 'passkey']).optional(),
  /** The OpenID provider login, kept with the session the code starts. */
  upstream: upstreamLoginSchema.optional(),
  issuedAt: timestamp,
})

/** What an authorization code stands for until POST /auth/token exchanges it. */
export type AuthCodeRecord = z.output<typeof authCodeRecord>

export interface AuthCodeInput {
  user: AuthUser
  claims: AuthCodeRecord['claims']
  provider?: string
  redirect?: string
  secondFactor?: AuthCodeRecord['secondFactor']
  upstream?: UpstreamLogin
  /** Binds the code to this PKCE S256 challenge instead of the browser (a native login). */
  codeChallenge?: string
}

export interface AuthCodeOptions {
  /**
   * Bind the code to the browser of `event` (default: POST /auth/token needs the code cookie); `false`
   * issues a bearer code any holder can exchange (non-browser clients only).
   */
  bindToBrowser?: boolean
}

/** Issues a single-use code valid for `authCode.expiresIn` seconds, browser-bound unless `bindToBrowser` is false or it has a `codeChallenge`. */
export async function createAuthCode(ctx: AuthContext, event: H3Event, input: AuthCodeInput, options: AuthCodeOptions = {}): Promise<string> {
  const code = randomToken(32)
  const binding = options.bindToBrowser === false || input.codeChallenge !== undefined ? undefined : browserBindingOf(event, ctx)
  const record: AuthCodeRecord = { ...input, user: storableUser(input.user), issuedAt: Date.now(), ...(binding ? { binding } : {}) }
  await ctx.store.write(ctx.store.key(CORE_RECORDS.authCode, code), record, ctx.lifetimes.authCode)
  return code
}

/** Atomically consumes a code: of concurrent exchanges, exactly one gets the record. */
export async function consumeAuthCode(ctx: AuthContext, code: string): Promise<AuthCodeRecord | null> {
  return ctx.store.take(ctx.store.key(CORE_RECORDS.authCode, code), authCodeRecord)
}
