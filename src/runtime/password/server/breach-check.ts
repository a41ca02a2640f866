/**
 * The breach check of new passwords (`breachCheck`): k-anonymity against a Have I Been Pwned–style range
 * API. Only the first 5 hex characters of the password's SHA-1 are sent; the answer's suffixes are
 * compared here. A failure of the API is reported as `unavailable`, never as a verdict on the password.
 */
import type { ResolvedPasswordOptions } from '../password-types'
import { authError } from '../../server/lib/edge/errors'
import { readBounded } from '../../server/lib/edge/request-guards'

type BreachCheckOptions = ResolvedPasswordOptions['breachCheck']

/** Most bytes read of an answer (a padded answer is about 40 kB); past it the answer counts as unavailable. */
export const MAX_BREACH_ANSWER_BYTES = 256 * 1024

export type BreachVerdict
  = | { status: 'clean' }
    | { status: 'breached', count: number }
  /** The API could not answer usably: `reason` says why (it names neither the password nor its hash). */
    | { status: 'unavailable', reason: string }

/** SHA-1 of the password's UTF-8 bytes, 40 uppercase hex characters (Web Crypto: Node and Workers alike). */
export async function sha1Hex(password: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-1', new TextEncoder().encode(password))
  return [...new Uint8Array(digest)].map(byte => byte.toString(16).padStart(2, '0')).join('').toUpperCase()
}

/** The body as text, at most `limit` bytes (more: null, and the rest is never read). */
async function boundedText(response: Response, limit: number): Promise<string | null> {
  const chunks = response.body ? await readBounded(response.body, limit) : []
  if (!chunks) return null
  const decoder = new TextDecoder()
  return chunks.map(chunk => decoder.decode(chunk, { stream: true })).join('') + decoder.decode()
}

const LINE = /^([0-9A-F]{35}):(\d+)$/i

/**
 * How often `suffix` was seen according to a range answer (padding lines count 0); null for a malformed
 * or empty answer (every prefix has entries, so an empty one is a broken API).
 */
export function countOf(body: string, suffix: string): number | null {
  let count = 0
  let lines = 0
  for (const raw of body.split('\n')) {
    const line = raw.trim()
    if (!line) continue
    const match = LINE.exec(line)
    if (!match) return null
    lines++
    if (match[1]!.toUpperCase() === suffix) count = Number(match[2])
  }
  return lines ? count : null
}

/**
 * Asks the range API about a password: `GET <url>/range/<first 5 of SHA-1>` with `Add-Padding: true`,
 * aborted after `timeout` ms (the answer's body included), no redirect followed, at most
 * {@link MAX_BREACH_ANSWER_BYTES} read.
 */
export async function lookupBreach(options: BreachCheckOptions, password: string): Promise<BreachVerdict> {
  const hash = await sha1Hex(password)
  const prefix = hash.slice(0, 5)
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), options.timeout)
  try {
    const response = await fetch(`${options.url.replace(/\/+$/, '')}/range/${prefix}`, {
      method: 'GET',
      headers: { 'add-padding': 'true', 'accept': 'text/plain' },
      redirect: 'manual',
      signal: controller.signal,
    })
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => {})
      return { status: 'unavailable', reason: `HTTP ${response.status}` }
    }
    const body = await boundedText(response, MAX_BREACH_ANSWER_BYTES)
    if (body === null) return { status: 'unavailable', reason: `answer over ${MAX_BREACH_ANSWER_BYTES} bytes` }
    const count = countOf(body, hash.slice(5))
    if (count === null) return { status: 'unavailable', reason: 'malformed answer' }
    return count > options.threshold ? { status: 'breached', count } : { status: 'clean' }
  }
  catch (error) {
    if (controller.signal.aborted) return { status: 'unavailable', reason: `no answer within ${options.timeout} ms` }
    const cause = (error as { cause?: { code?: unknown } }).cause?.code
    return { status: 'unavailable', reason: `request failed (${typeof cause === 'string' ? cause : (error as Error).name})` }
  }
  finally {
    clearTimeout(timer)
    controller.abort()
  }
}

/**
 * The check new passwords go through: true when the password is breached; when the API is unavailable,
 * false with a warning (fail open), or 503 `breach_check_unavailable` with `failClosed`.
 */
export function breachGuard(options: BreachCheckOptions, warn: (message: string) => void): (password: string) => Promise<boolean> {
  return async (password) => {
    if (!options.enabled) return false
    const verdict = await lookupBreach(options, password)
    if (verdict.status !== 'unavailable') return verdict.status === 'breached'
    if (options.failClosed) {
      warn(`The breach check of a new password failed (${verdict.reason}): the password was refused (breachCheck.failClosed)`)
      throw authError('breach_check_unavailable')
    }
    warn(`The breach check of a new password failed (${verdict.reason}): the password was accepted unchecked`)
    return false
  }
}
