/** The emailed login links: one record each, keyed by an HMAC of its token (the token is never stored). */
import { z } from 'zod'
import type { AuthContext } from '../../server/lib/core/context'
import { randomToken } from '../../server/lib/store/crypto'
import type { RecordKey } from '../../server/lib/store/record-store'
import { recordTypes } from '../../server/lib/store/record-types'
import { timestamp } from '../../server/lib/core/records/record-schema'

/** The magic links' record kind (see store/record-types.ts); the short codes are the emailed codes' (`magic_link`). */
export const MAGIC_LINK_RECORDS = recordTypes({ magicLink: 'magic-link' })

const magicLinkRecord = z.object({
  /** Canonical address the link was sent to. */
  email: z.string().min(1),
  /** HMAC of the code binding of the browser that asked (code-binding.ts). */
  binding: z.string().min(1),
  /** Same-origin path to land on after the login. */
  redirect: z.string().optional(),
  createdAt: timestamp,
})

/** A pending link: who it logs in, and which browser asked for it. */
export type MagicLinkRecord = z.output<typeof magicLinkRecord>

/** The key of a link's record, from its token. */
export function magicLinkKey(ctx: AuthContext, token: string): RecordKey {
  return ctx.store.key(MAGIC_LINK_RECORDS.magicLink, token)
}

/** Stores a new link for `ttlSeconds`; returns its token (32 random bytes), which only the email carries. */
export async function createMagicLink(ctx: AuthContext, input: Omit<MagicLinkRecord, 'createdAt'>, ttlSeconds: number): Promise<string> {
  const token = randomToken(32)
  await ctx.store.write(magicLinkKey(ctx, token), { ...input, createdAt: Date.now() } satisfies MagicLinkRecord, ttlSeconds)
  return token
}

/** The pending link under `key`, left in place (opening it elsewhere does not spend it). */
export function readMagicLink(ctx: AuthContext, key: RecordKey): Promise<MagicLinkRecord | null> {
  return ctx.store.read(key, magicLinkRecord)
}

/** Spends the link under `key`: of concurrent calls, exactly one gets the record. */
export function takeMagicLink(ctx: AuthContext, key: RecordKey): Promise<MagicLinkRecord | null> {
  return ctx.store.take(key, magicLinkRecord)
}
