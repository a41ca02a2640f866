import type { MagicCodeAction } from '../../../types/auth'
import type { AuthContext } from '../context'
import { randomDigits, randomToken, safeEqual } from '../crypto'

/** A pending 6-digit code, bound to an email and an action. */
export interface MagicCodeRecord<TData = Record<string, unknown>> {
  id: string
  email: string
  action: MagicCodeAction
  /** HMAC of the code: the code itself is never stored. */
  codeHash: string
  /** Key of the by-code index entry, so a replacement can remove it. */
  indexKey: string
  /** Extra data kept with the code (registration: the hashed password). */
  data: TData
  createdAt: number
}

export type MagicCodeResult<TData> =
  | { status: 'ok', record: MagicCodeRecord<TData> }
  | { status: 'invalid' }
  | { status: 'too_many_attempts' }

const PENDING = 'magic'
const BY_CODE = 'magic-code'
const ATTEMPTS = 'magic-attempts'

const pendingKey = (ctx: AuthContext, action: MagicCodeAction, email: string) => ctx.store.key(PENDING, `${action}:${email}`)
const codeHash = (ctx: AuthContext, action: MagicCodeAction, code: string) => ctx.store.key(BY_CODE, `${action}:${code}`)

/**
 * Creates (or replaces) the pending code of an email and action and returns the code. A code is
 * unique among the pending codes of its action, so a link carrying only the code finds its email.
 */
export async function createMagicCode<TData extends Record<string, unknown>>(ctx: AuthContext, input: { email: string, action: MagicCodeAction, data: TData, ttlSeconds: number }): Promise<string> {
  const key = pendingKey(ctx, input.action, input.email)
  const previous = await ctx.store.read<MagicCodeRecord>(key)
  if (previous) await ctx.store.remove(previous.indexKey)
  for (let i = 0; i < 10; i++) {
    const code = randomDigits(6)
    const indexKey = codeHash(ctx, input.action, code)
    if (!(await ctx.store.writeIfAbsent(indexKey, { email: input.email }, input.ttlSeconds))) continue
    const record: MagicCodeRecord<TData> = { id: randomToken(12), email: input.email, action: input.action, codeHash: indexKey, indexKey, data: input.data, createdAt: Date.now() }
    await ctx.store.write(key, record, input.ttlSeconds)
    return code
  }
  throw new Error('Could not allocate a unique verification code')
}

/**
 * Removes the pending code of an email and action (e.g. after a failed delivery). With `code`,
 * only that code is made unusable: a newer code that replaced it in the meantime stays.
 */
export async function discardMagicCode(ctx: AuthContext, action: MagicCodeAction, email: string, options: { code?: string } = {}): Promise<void> {
  const key = pendingKey(ctx, action, email)
  if (options.code === undefined) {
    const record = await ctx.store.take<MagicCodeRecord>(key)
    if (record) await ctx.store.remove(record.indexKey)
    return
  }
  const indexKey = codeHash(ctx, action, options.code)
  await ctx.store.remove(indexKey)
  const pending = await ctx.store.read<MagicCodeRecord>(key)
  if (pending && safeEqual(pending.codeHash, indexKey)) await ctx.store.remove(key)
}

/**
 * Verifies a code, by email when one is given, else through the by-code index. Every attempt on
 * a pending code is counted atomically; past `maxAttempts` even the right code is refused. A match
 * consumes the code atomically (single use).
 */
export async function verifyMagicCode<TData = Record<string, unknown>>(ctx: AuthContext, input: { action: MagicCodeAction, code: string, email?: string, maxAttempts: number, ttlSeconds: number }): Promise<MagicCodeResult<TData>> {
  let email = input.email
  if (!email) {
    const index = await ctx.store.read<{ email: string }>(codeHash(ctx, input.action, input.code))
    if (!index) return { status: 'invalid' }
    email = index.email
  }
  const key = pendingKey(ctx, input.action, email)
  const pending = await ctx.store.read<MagicCodeRecord<TData>>(key)
  if (!pending) return { status: 'invalid' }
  const attempts = await ctx.store.incr(ctx.store.key(ATTEMPTS, pending.id), input.ttlSeconds)
  if (attempts > input.maxAttempts) return { status: 'too_many_attempts' }
  if (!safeEqual(codeHash(ctx, input.action, input.code), pending.codeHash)) {
    return attempts >= input.maxAttempts ? { status: 'too_many_attempts' } : { status: 'invalid' }
  }
  const taken = await ctx.store.take<MagicCodeRecord<TData>>(key)
  if (!taken || taken.id !== pending.id) return { status: 'invalid' }
  await ctx.store.remove(taken.indexKey)
  return { status: 'ok', record: taken }
}
