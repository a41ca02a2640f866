import { z } from 'zod'
import type { AuthContext } from '../../server/lib/core/context'
import { OAUTH_RECORDS } from './oauth-state'

/** Lifetimes of a mock authorization code and access token (seconds). */
export const MOCK_CODE_TTL = 60
export const MOCK_TOKEN_TTL = 3600

const mockCodeRecord = z.object({
  clientId: z.string(),
  redirectUri: z.string(),
  codeChallenge: z.string(),
  scope: z.string(),
  sub: z.string(),
})

/** An authorization code of the mock provider, until its token endpoint takes it. */
export type MockCodeRecord = z.output<typeof mockCodeRecord>

const mockTokenRecord = z.object({ sub: z.string() })

/** An access token of the mock provider: the mock user it stands for. */
export type MockTokenRecord = z.output<typeof mockTokenRecord>

export async function saveMockCode(ctx: AuthContext, code: string, record: MockCodeRecord): Promise<void> {
  await ctx.store.write(ctx.store.key(OAUTH_RECORDS.mockCode, code), record, MOCK_CODE_TTL)
}

export function takeMockCode(ctx: AuthContext, code: string): Promise<MockCodeRecord | null> {
  return ctx.store.take(ctx.store.key(OAUTH_RECORDS.mockCode, code), mockCodeRecord)
}

export async function saveMockToken(ctx: AuthContext, token: string, record: MockTokenRecord): Promise<void> {
  await ctx.store.write(ctx.store.key(OAUTH_RECORDS.mockToken, token), record, MOCK_TOKEN_TTL)
}

/** The mock user a live mock access token stands for. */
export function readMockToken(ctx: AuthContext, token: string): Promise<MockTokenRecord | null> {
  return ctx.store.read(ctx.store.key(OAUTH_RECORDS.mockToken, token), mockTokenRecord)
}
