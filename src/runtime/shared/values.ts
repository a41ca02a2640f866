/** Small checks of untyped values (options, JSON answers, stored records). */

/** A plain object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** `value` when it is a non-empty string, else undefined. */
export function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** `value` trimmed when it is a string with more than white space, else undefined. */
export function trimmedString(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() ? value.trim() : undefined
}

/** `make` run once per key object, its result kept as long as the key lives (a throw is not kept). */
export function oncePer<K extends object, V>(make: (key: K) => V): (key: K) => V {
  const made = new WeakMap<K, V>()
  return (key) => {
    if (!made.has(key)) made.set(key, make(key))
    return made.get(key) as V
  }
}

/** Writes in flight at once when one change touches many records (fs: open files). */
const BATCH = 64

/** Runs `fn` over `items`, at most 64 at a time. */
export async function inBatches<T>(items: readonly T[], fn: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += BATCH) await Promise.all(items.slice(i, i + BATCH).map(fn))
}
