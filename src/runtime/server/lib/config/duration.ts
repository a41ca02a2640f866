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
    `Invalid duration "${String(value)}": expected a positive number of seconds or a string such as '90s', '5m', '1h', '7d', '2 weeks'`,
  )
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
 * Convert a duration to whole seconds.
 *
 * Numbers are seconds. Strings hold an integer or decimal and an optional, case-insensitive unit
 * (`s`/`sec`/`second(s)`, `m`/`min`/`minute(s)`, `h`/`hr`/`hour(s)`, `d`/`day(s)`, `w`/`week(s)`);
 * without a unit the number is seconds. The result is rounded and must be at least 1.
 *
 * @throws Error for anything else (negative, zero, non-finite, unknown unit, empty string).
 */
export function parseDuration(value: Duration): number {
  let seconds: number
  if (typeof value === 'number') {
    seconds = value
  }
  else if (typeof value === 'string') {
    seconds = durationStringToSeconds(value)
  }
  else {
    throw invalidDuration(value)
  }
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw invalidDuration(value)
  }
  const rounded = Math.round(seconds)
  if (rounded < 1 || !Number.isSafeInteger(rounded)) {
    throw invalidDuration(value)
  }
  return rounded
}
