/**
 * The chain of the audit log: each event carries the MAC of its predecessor (`prev`) and its own MAC over
 * `prev` and its canonical form, under the audit key (`audit.secret`, or a key derived from `token.secret`).
 * Pure functions: every store links and verifies events the same way.
 */
import { createHmac } from 'node:crypto'
import type { AuditEvent, AuditVerification, ChainedAuditEvent } from '../audit-types'
import { deriveKey, safeEqual } from '../../server/lib/store/crypto'
import { isRecord } from '../../shared/values'

/** A key of the chain and its id (the first 8 characters of a MAC of the text `kid` under it). */
export interface ChainKey {
  kid: string
  key: Buffer
}

/** The last stored event of a log: what the next one links to. */
export interface ChainHead {
  seq: number
  mac: string
}

const KEY_PURPOSE = 'nuxt-svc-auth:audit-chain'

function chainKey(secret: string): ChainKey {
  const key = deriveKey(secret, KEY_PURPOSE)
  return { kid: createHmac('sha256', key).update('kid').digest('base64url').slice(0, 8), key }
}

/**
 * The chain's keys, current first: `audit.secret` and `audit.previousSecrets`; without `audit.secret`, keys
 * derived from `token.secret` and `token.previousSecrets`.
 */
export function chainKeys(audit: { secret: string, previousSecrets: readonly string[] }, token: { secret: string, previousSecrets: readonly string[] }): ChainKey[] {
  const secrets = audit.secret ? [audit.secret, ...audit.previousSecrets] : [token.secret, ...token.previousSecrets, ...audit.previousSecrets]
  return [...new Set(secrets.filter(Boolean))].map(chainKey)
}

/** The text an event's MAC covers: its fields in a fixed order, details by name (never key order). */
export function canonicalEvent(event: AuditEvent & { seq: number }): string {
  const details = Object.keys(event.details).sort().map(name => [name, event.details[name]])
  return JSON.stringify([event.seq, event.id, event.at, event.type, event.outcome, event.actor, event.subject, event.impersonator ?? null, event.organization ?? null, event.session ?? null, event.client.family, event.client.addressPrefix, details])
}

function macOf(key: ChainKey, prev: string, event: AuditEvent & { seq: number }): string {
  return createHmac('sha256', key.key).update(prev).update('\n').update(canonicalEvent(event)).digest('base64url')
}

/** `events` linked after `head` (null: an empty log) under the current key, in order. */
export function linkEvents(key: ChainKey, head: ChainHead | null, events: readonly AuditEvent[]): ChainedAuditEvent[] {
  let seq = head?.seq ?? 0
  let prev = head?.mac ?? ''
  return events.map((event) => {
    const numbered = { ...event, seq: ++seq }
    const chained: ChainedAuditEvent = { ...numbered, prev, kid: key.kid, mac: macOf(key, prev, numbered) }
    prev = chained.mac
    return chained
  })
}

/** The fields of a stored event: those its MAC covers ({@link canonicalEvent}) and its place in the chain. */
const STORED_FIELDS = new Set(['id', 'at', 'type', 'outcome', 'actor', 'subject', 'impersonator', 'organization', 'session', 'client', 'details', 'seq', 'prev', 'kid', 'mac'])
const optionalText = (value: unknown) => value === undefined || typeof value === 'string'
const nullableText = (value: unknown) => value === null || typeof value === 'string'
/** A detail: one value, never an object or array (which could also nest too deep to serialize). */
const isDetail = (value: unknown) => value === null || ['string', 'number', 'boolean'].includes(typeof value)

/**
 * The chained event a stored line holds, or undefined when it is not one. A field its MAC does not cover (one
 * added by a writer of the store, or `null` for an absent one) or a detail that is no single value makes it
 * none: no read answers what the chain does not vouch for, and verification reports it rather than failing.
 */
export function parseChainedEvent(line: string): ChainedAuditEvent | undefined {
  let value: unknown
  try {
    value = JSON.parse(line)
  }
  catch {
    return undefined
  }
  if (!isRecord(value) || !Number.isSafeInteger(value.seq) || typeof value.mac !== 'string' || typeof value.prev !== 'string' || typeof value.kid !== 'string') return undefined
  if (typeof value.id !== 'string' || typeof value.at !== 'string' || typeof value.type !== 'string' || typeof value.outcome !== 'string') return undefined
  if (!isRecord(value.details) || !Object.values(value.details).every(isDetail)) return undefined
  if (Object.keys(value).some(name => !STORED_FIELDS.has(name)) || !nullableText(value.actor) || !nullableText(value.subject)) return undefined
  if (!optionalText(value.impersonator) || !optionalText(value.organization) || !optionalText(value.session)) return undefined
  const { client } = value
  if (!isRecord(client) || Object.keys(client).length !== 2 || !nullableText(client.family) || !nullableText(client.addressPrefix)) return undefined
  return value as unknown as ChainedAuditEvent
}

/** A stored entry as a verification reads it: the line, or what the store could not read. */
export type VerifiableEntry = { line: string } | { torn: true }

/**
 * Checks stored entries, oldest first: each MAC under its key, each `prev` against the MAC before it, `seq`
 * one more than the one before. The first event may link to one trimmed or before `since`: its own MAC is
 * checked, its link is not. Stops at the first problem. An event that skips seqs is a gap, unless the next
 * entry is one it skipped: then the two were swapped (`reordered`).
 */
export async function verifyEntries(keys: readonly ChainKey[], entries: AsyncIterable<VerifiableEntry>): Promise<AuditVerification> {
  type Reason = NonNullable<AuditVerification['problem']>['reason']
  const byKid = new Map(keys.map(key => [key.kid, key]))
  let checked = 0
  let last: ChainedAuditEvent | undefined
  /** An event after a skip in `seq` (`last` is the event before it): judged by the entry after it. */
  let skipping: ChainedAuditEvent | undefined
  const problem = (event: ChainedAuditEvent, reason: Reason): AuditVerification => ({ ok: false, checked, problem: { seq: event.seq, id: event.id, reason } })
  for await (const entry of entries) {
    const event = 'line' in entry ? parseChainedEvent(entry.line) : undefined
    if (skipping) return problem(skipping, event && event.seq > last!.seq && event.seq < skipping.seq ? 'reordered' : 'gap')
    if ('torn' in entry) return { ok: true, checked, tornTail: true }
    if (!event) return { ok: false, checked, problem: { seq: last ? last.seq + 1 : 0, reason: 'unreadable' } }
    const key = byKid.get(event.kid)
    if (!key) return problem(event, 'unknown_key')
    const { prev, kid: _kid, mac, ...fields } = event
    if (!safeEqual(macOf(key, prev, fields), mac)) return problem(event, 'edited')
    if (last) {
      if (event.seq <= last.seq) return problem(event, 'reordered')
      if (event.seq !== last.seq + 1) {
        skipping = event
        continue
      }
      if (!safeEqual(prev, last.mac)) return problem(event, 'edited')
    }
    last = event
    checked++
  }
  return skipping ? problem(skipping, 'gap') : { ok: true, checked }
}

/** The public event of a chained one (what the routes answer). */
export function withoutChain({ seq: _seq, prev: _prev, kid: _kid, mac: _mac, ...event }: ChainedAuditEvent): AuditEvent {
  return event
}
