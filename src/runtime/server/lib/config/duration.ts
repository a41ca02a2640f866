import type { Duration } from '../../../types/options'

const SECONDS_PER_UNIT: Readonly<Record<string, number>> = {
  s: 1,
  sec: 1,
  secs: 1,
  second: 1,
  seconds: 1,
  m: 60,
  min: 60,
  mins: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hr: 3600,
  hrs: 3600,
  hour: 3600,
  hours: 3600,
  d: 86_400,
  day: 86_400,
  days: 86_400,
  w: 604_800,
  week: 604_800,
  weeks: 604_800,
}

/** Number (integer or decimal), optional unit, optional whitespace around and between them. */
const DURATION_PATTERN = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(?:([a-z]+)\s*)?$/i

function invalidDuration(value: unknown): Error {
  return new Error(
    `Invalid duration "${String(value)}": expected a number of seconds or a string such as '90s', '5m', '1h', '7d', '2 weeks'`,
  )
}

/** How {@link parseDuration} reads a duration. */
export interface DurationOptions {
  /** Accept 0 (an option that 0 turns off). @default false */
  zero?: boolean
  /** The unit of numbers and of the result: `'ms'` for an option in milliseconds. @default 's' */
  unit?: 's' | 'ms'
}

function durationStringToSeconds(value: string): number {
  const match = DURATION_PATTERN.exec(value)
  if (!match) {
    throw invalidDuration(value)
  }
  const amount = Number(match[1])
  const unit = match[2]?.toLowerCase() ?? 's'
  const multiplier = SECONDS_PER_UNIT[unit]
  if (multiplier === undefined) {
    throw invalidDuration(value)
  }
  return amount * multiplier
}

/**
 * Convert a duration to a whole number of seconds (`unit: 'ms'`: milliseconds).
 *
 * Numbers are in that unit. Strings hold an integer or decimal and an optional, case-insensitive unit
 * (`s`/`sec`/`second(s)`, `m`/`min`/`minute(s)`, `h`/`hr`/`hour(s)`, `d`/`day(s)`, `w`/`week(s)`);
 * without a unit the number is seconds. The result is rounded and must be at least 1 (0 with `zero`).
 *
 * @throws Error for anything else (negative, zero, non-finite, unknown unit, empty string).
 */
export function parseDuration(value: Duration, { zero = false, unit = 's' }: DurationOptions = {}): number {
  let amount: number
  if (typeof value === 'number') {
    amount = value
  }
  else if (typeof value === 'string') {
    amount = durationStringToSeconds(value) * (unit === 'ms' ? 1000 : 1)
  }
  else {
    throw invalidDuration(value)
  }
  const rounded = Math.round(amount)
  if (!Number.isSafeInteger(rounded) || rounded < (zero ? 0 : 1) || amount < 0) {
    throw invalidDuration(value)
  }
  return rounded
}
