import type { Duration } from '../../../types/options'

/** Seconds per unit, by the unit's first letter. */
const SECONDS_PER_UNIT: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 }

/** Number (integer or decimal), optional unit, optional whitespace around and between them. */
const DURATION_PATTERN = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(?:(s(?:ecs?|econds?)?|m(?:ins?|inutes?)?|h(?:rs?|ours?)?|d(?:ays?)?|w(?:eeks?)?)\s*)?$/i

const invalidDuration = (value: unknown) => new Error(`Invalid duration "${String(value)}": expected a number of seconds or a string such as '90s', '5m', '1h', '7d', '2 weeks'`)

/**
 * A duration in whole seconds (`unit: 'ms'`: milliseconds): a number of that unit, or a string with an
 * optional unit of {@link DURATION_PATTERN} (none: seconds); rounded, at least 1 (0 with `zero`).
 * @throws Error for anything else.
 */
export function parseDuration(value: Duration, { zero = false, unit = 's' }: { zero?: boolean, unit?: 's' | 'ms' } = {}): number {
  let amount: unknown = value
  if (typeof value === 'string') {
    const match = DURATION_PATTERN.exec(value)
    if (!match) throw invalidDuration(value)
    amount = Number(match[1]) * SECONDS_PER_UNIT[(match[2] ?? 's')[0]!.toLowerCase()]! * (unit === 'ms' ? 1000 : 1)
  }
  const rounded = Math.round(amount as number)
  if (typeof amount !== 'number' || !Number.isSafeInteger(rounded) || rounded < (zero ? 0 : 1) || amount < 0) {
    throw invalidDuration(value)
  }
  return rounded
}
