import { z } from 'zod'
import type { MagicCodeAction } from '../../types/auth'
import type { AuthContext } from '../../server/lib/core/context'
import { randomDigits, randomToken } from '../../server/lib/store/crypto'
import type { RecordKey } from '../../server/lib/store/record-store'
import { reserveUnits } from '../../server/lib/edge/rate-counter'
import { recordTypes } from '../../server/lib/store/record-types'
import { jsonObject, timestamp } from '../../server/lib/core/records/record-schema'

/** The emailed codes' record kinds (see store/record-types.ts). */
export const MAGIC_CODE_RECORDS = recordTypes({
  magicPending: 'magic',
  magicByCode: 'magic-code',
  magicByFlow: 'magic-flow',
  magicAttempts: 'magic-attempts',
  /** Lookups by code alone that found nothing. */
  magicMisses: 'magic-misses',
  /** Codes issued per action and time slot. */
  magicIssued: 'magic-issued',
  magicFailures: 'magic-failed',
})

const ACTIONS = ['register', 'login', 'reset', 'magic_link'] as const satisfies readonly MagicCodeAction[]

const magicCodeRecord = z.object({
  /** Random id of this code; also the `flow` of its verify link. */
  id: z.string().min(1),
  email: z.string().min(1),
  action: z.enum(ACTIONS),
  /** Key of the by-code index entry: an HMAC of action and code (the code is never stored). */
  indexKey: z.string().min(1),
  flowKey: z.string().min(1),
  data: jsonObject<Record<string, unknown>>(),
  createdAt: timestamp,
})

/** A pending 6-digit code, bound to an email and an action. */
export type MagicCodeRecord<TData = Record<string, unknown>> = Omit<z.output<typeof magicCodeRecord>, 'data'> & { data: TData }

const emailIndex = z.object({ email: z.string().min(1) })

export type MagicCodeResult<TData>
  = | { status: 'ok', record: MagicCodeRecord<TData> }
    | { status: 'invalid' }
    | { status: 'too_many_attempts' }
  /** A budget is spent: code-only verification of the action, or failures of the email (counter `budgetKey`). */
    | { status: 'budget_exhausted', budgetKey: RecordKey }

export interface IssuedMagicCode {
  code: string
  /** The `flow` parameter of its link: identifies the pending code without revealing the email. */
  flow: string
}

/** Outstanding codes the code-only budget is sized for: more codes alive, fewer misses allowed ({@link emailOfCode}). */
const REFERENCE_OUTSTANDING = 10

const pendingKey = (ctx: AuthContext, action: MagicCodeAction, email: string) => ctx.store.key(MAGIC_CODE_RECORDS.magicPending, `${action}:${email}`)
const codeKey = (ctx: AuthContext, action: MagicCodeAction, code: string) => ctx.store.key(MAGIC_CODE_RECORDS.magicByCode, `${action}:${code}`)
const flowKey = (ctx: AuthContext, action: MagicCodeAction, flow: string) => ctx.store.key(MAGIC_CODE_RECORDS.magicByFlow, `${action}:${flow}`)

/**
 * Creates (or replaces) the pending code of an email and action; unique among its action's pending codes,
 * so a link carrying only the code finds its email.
 */
export async function createMagicCode<TData extends Record<string, unknown>>(ctx: AuthContext, input: { email: string, action: MagicCodeAction, data: TData, ttlSeconds: number }): Promise<IssuedMagicCode> {
  const key = pendingKey(ctx, input.action, input.email)
  const previous = await ctx.store.read(key, magicCodeRecord)
  if (previous) await Promise.all([ctx.store.remove(ctx.store.at(previous.indexKey)), ctx.store.remove(ctx.store.at(previous.flowKey))])
  for (let i = 0; i < 10; i++) {
    const code = randomDigits(6)
    const indexKey = codeKey(ctx, input.action, code)
    if (!(await ctx.store.writeIfAbsent(indexKey, { email: input.email }, input.ttlSeconds))) continue
    const id = randomToken(16)
    const flow = flowKey(ctx, input.action, id)
    const record: MagicCodeRecord<TData> = { id, email: input.email, action: input.action, indexKey: indexKey.current, flowKey: flow.current, data: input.data, createdAt: Date.now() }
    await Promise.all([
      ctx.store.write(flow, { email: input.email }, input.ttlSeconds),
      ctx.store.write(key, record, input.ttlSeconds),
      noteIssued(ctx, input.action, input.ttlSeconds),
    ])
    return { code, flow: id }
  }
  throw new Error('Could not allocate a unique verification code')
}

/** The pending code of an email and action, left in place and counting no attempt. */
export function readMagicCode<TData = Record<string, unknown>>(ctx: AuthContext, action: MagicCodeAction, email: string): Promise<MagicCodeRecord<TData> | null> {
  return ctx.store.read(pendingKey(ctx, action, email), magicCodeRecord) as Promise<MagicCodeRecord<TData> | null>
}

/** Removes the pending code of an email and action; with `code`, only that code (a newer one stays). */
export async function discardMagicCode(ctx: AuthContext, action: MagicCodeAction, email: string, options: { code?: string } = {}): Promise<void> {
  const key = pendingKey(ctx, action, email)
  if (options.code === undefined) {
    const record = await ctx.store.take(key, magicCodeRecord)
    if (record) await Promise.all([ctx.store.remove(ctx.store.at(record.indexKey)), ctx.store.remove(ctx.store.at(record.flowKey))])
    return
  }
  const indexKey = codeKey(ctx, action, options.code)
  await ctx.store.remove(indexKey)
  const pending = await ctx.store.read(key, magicCodeRecord)
  if (pending && ctx.store.matches(indexKey, pending.indexKey)) await Promise.all([ctx.store.remove(key), ctx.store.remove(ctx.store.at(pending.flowKey))])
}

export interface VerifyMagicCodeInput {
  action: MagicCodeAction
  code: string
  email?: string
  flow?: string
  maxAttempts: number
  ttlSeconds: number
  /**
   * Code-only lookups that find nothing, per action: `max` per `windowSeconds` with at most 10 codes
   * outstanding, proportionally fewer beyond; 0 refuses code-only verification. Absent: unlimited.
   */
  codeOnlyBudget?: { max: number, windowSeconds: number }
  /** Failed verifications of one email's codes of the action (`max` per `windowSeconds`). Absent: unlimited. */
  emailFailureBudget?: { max: number, windowSeconds: number }
}

const missKeyOf = (ctx: AuthContext, action: MagicCodeAction) => ctx.store.key(MAGIC_CODE_RECORDS.magicMisses, action)

// Codes issued per window as long as a code lives: those of this and the previous window bound the codes alive.
const issuedKey = (ctx: AuthContext, action: MagicCodeAction, index: number) => ctx.store.key(MAGIC_CODE_RECORDS.magicIssued, `${action}:${index}`)
const windowIndex = (ttlSeconds: number, now = Date.now()) => Math.floor(now / (ttlSeconds * 1000))

async function noteIssued(ctx: AuthContext, action: MagicCodeAction, ttlSeconds: number): Promise<void> {
  await ctx.store.incr(issuedKey(ctx, action, windowIndex(ttlSeconds)), ttlSeconds * 2)
}

async function outstandingCodes(ctx: AuthContext, action: MagicCodeAction, ttlSeconds: number): Promise<number> {
  const index = windowIndex(ttlSeconds)
  const [current, previous] = await Promise.all([ctx.store.count(issuedKey(ctx, action, index)), ctx.store.count(issuedKey(ctx, action, index - 1))])
  return current + previous
}

/**
 * Finds the email of a code-only lookup on the action's miss budget, reserved first (concurrent guesses
 * never overdraw it) and given back on a hit. A guess hits one of N codes with probability N/10⁶, so
 * misses × max(N, 10) ≤ max × 10 keeps the expected hits fixed however many codes an attacker causes.
 */
async function emailOfCode(ctx: AuthContext, input: VerifyMagicCodeInput): Promise<string | 'budget_exhausted' | null> {
  const budget = input.codeOnlyBudget
  let miss: { release: () => Promise<void> } | undefined
  if (budget) {
    if (budget.max <= 0) return null
    const outstanding = await outstandingCodes(ctx, input.action, input.ttlSeconds)
    const allowed = Math.floor(budget.max * REFERENCE_OUTSTANDING / Math.max(REFERENCE_OUTSTANDING, outstanding))
    const reserved = await reserveUnits(ctx, [{ key: missKeyOf(ctx, input.action), max: allowed }], budget.windowSeconds)
    if (!reserved.granted) return 'budget_exhausted'
    miss = reserved
  }
  const index = await ctx.store.read(codeKey(ctx, input.action, input.code), emailIndex)
  if (index) await miss?.release()
  return index?.email ?? null
}

/**
 * Verifies a code, found by email, flow id or (code only, on the miss budget) the by-code index. Every
 * attempt is counted atomically (past `maxAttempts` even the right code fails); a match consumes it.
 */
export async function verifyMagicCode<TData = Record<string, unknown>>(ctx: AuthContext, input: VerifyMagicCodeInput): Promise<MagicCodeResult<TData>> {
  let email = input.email
  if (!email && input.flow) email = (await ctx.store.read(flowKey(ctx, input.action, input.flow), emailIndex))?.email
  else if (!email) {
    const found = await emailOfCode(ctx, input)
    if (found === 'budget_exhausted') return { status: 'budget_exhausted', budgetKey: missKeyOf(ctx, input.action) }
    email = found ?? undefined
  }
  if (!email) return { status: 'invalid' }
  const key = pendingKey(ctx, input.action, email)
  const pending = await ctx.store.read(key, magicCodeRecord)
  if (!pending) return { status: 'invalid' }
  const attempts = await ctx.store.incr(ctx.store.key(MAGIC_CODE_RECORDS.magicAttempts, pending.id), input.ttlSeconds)
  if (attempts > input.maxAttempts) return { status: 'too_many_attempts' }
  // A failure of this email is reserved before the comparison and given back on a match.
  const failures = input.emailFailureBudget
  let failure: { release: () => Promise<void> } | undefined
  if (failures) {
    const reserved = await reserveUnits(ctx, [{ key: ctx.store.key(MAGIC_CODE_RECORDS.magicFailures, `${input.action}:${email}`), max: failures.max }], failures.windowSeconds)
    if (!reserved.granted) return { status: 'budget_exhausted', budgetKey: reserved.key }
    failure = reserved
  }
  if (!ctx.store.matches(codeKey(ctx, input.action, input.code), pending.indexKey)) {
    return attempts >= input.maxAttempts ? { status: 'too_many_attempts' } : { status: 'invalid' }
  }
  await failure?.release()
  const taken = await ctx.store.take(key, magicCodeRecord)
  if (!taken || taken.id !== pending.id) return { status: 'invalid' }
  await Promise.all([ctx.store.remove(ctx.store.at(taken.indexKey)), ctx.store.remove(ctx.store.at(taken.flowKey))])
  return { status: 'ok', record: taken as MagicCodeRecord<TData> }
}
