import type { AuthUser, CustomClaims } from '../../../types/auth'
import type { AuthContext } from '../context'
import { randomToken } from '../crypto'
import { storableUser } from './user'

/** What an authorization code stands for until POST /auth/token exchanges it. */
export interface AuthCodeRecord {
  user: AuthUser
  claims: CustomClaims
  provider?: string
  /** Same-origin path chosen at login, returned to the callback page. */
  redirect?: string
  issuedAt: number
}

const NS = 'code'

/** Issues a single-use code valid for `authCode.expiresIn` seconds. */
export async function createAuthCode(ctx: AuthContext, input: Omit<AuthCodeRecord, 'issuedAt' | 'user'> & { user: AuthUser }): Promise<string> {
  const code = randomToken(32)
  const record: AuthCodeRecord = { ...input, user: storableUser(input.user), issuedAt: Date.now() }
  await ctx.store.write(ctx.store.key(NS, code), record, ctx.lifetimes.authCode)
  return code
}

/** Atomically consumes a code: of concurrent exchanges, exactly one gets the record. */
export async function consumeAuthCode(ctx: AuthContext, code: string): Promise<AuthCodeRecord | null> {
  return ctx.store.take<AuthCodeRecord>(ctx.store.key(NS, code))
}
