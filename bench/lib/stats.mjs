// Statistics and number formatting for the report.

/** Mean of a non-empty list. */
export const avg = xs => xs.reduce((a, b) => a + b, 0) / xs.length

/** Median of a non-empty list (not sorted in place). */
export function median(xs) {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** The p-quantile (0..1) of an ascending list. */
export const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]

/** Count, p50 and p99 of a list of latencies (sorted in place). */
export function latencyStats(xs) {
  xs.sort((a, b) => a - b)
  return { n: xs.length, p50: percentile(xs, 0.5), p99: percentile(xs, 0.99) }
}

/** 12,345 */
export const fmtInt = n => Math.round(n).toLocaleString('en-US')

/** Milliseconds: two decimals below 10, none above. */
export const fmtMs = n => (n >= 10 ? n.toFixed(0) : n.toFixed(2))

/** Bytes as MiB with one decimal. */
export const fmtMiB = bytes => (bytes / 1024 ** 2).toFixed(1)

/** A value for the goal table: thousands as integers, small values with two or three decimals. */
export const fmtValue = n => (Math.abs(n) >= 100 ? fmtInt(n) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(n < 2 ? 3 : 2))

/** "met" or a bold "not met", as every goal line prints it. */
export const status = met => (met ? 'met' : '**not met**')

/**
 * A goal: `{ name, value, target, met }` (the shape every section returns), where
 * `target` reads like "≥ 1.5" and `met` compares `value` with it.
 */
export function goal(name, value, op, limit) {
  const met = op === '≥' ? value >= limit : value <= limit
  return { name, value, target: `${op} ${limit}`, met }
}

/** Appends `items` to `target` (push(...items) overflows the stack for arrays of ~100,000 and more). */
export function append(target, items) {
  for (const item of items) target.push(item)
  return target
}
