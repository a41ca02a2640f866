import type { Sealer } from './crypto'

/** Characters (sealed plus plain) the cache of one record store may hold: a few MB. */
const DEFAULT_BUDGET_CHARS = 4_000_000
/** Values longer than this share of the budget are opened every time, never cached. */
const LARGEST_SHARE = 64

/**
 * `sealer.open` with a cache of what it opened. A sealed value has a random IV: the same sealed text
 * always opens to the same plain text, so the cache is never stale. It spares AES-GCM (about 5 µs a
 * value, mostly setting up the decipher) on values read again and again: the entries of a map listed
 * on every request (a user's 1,000 organizations). What does not open is not cached.
 *
 * Two generations, each at most half the budget: values go into the current one, which becomes the
 * previous one when full (the former previous one is dropped); a value found in the previous one
 * moves back into the current one. What was read within the last half budget stays, and a hit costs
 * one lookup (an exact LRU reorders its list on every hit: most of the cost of 1,000 hits).
 * @param sealer The sealer whose values are opened.
 * @param budgetChars Most characters (sealed and plain) kept at once.
 * @returns `open` with the cache in front.
 */
export function cachedOpen(sealer: Sealer, budgetChars = DEFAULT_BUDGET_CHARS): (sealed: string) => string | null {
  const generationChars = budgetChars / 2
  let current = new Map<string, string>()
  let previous = new Map<string, string>()
  let used = 0
  return (sealed) => {
    const hit = current.get(sealed)
    if (hit !== undefined) return hit
    const plain = previous.get(sealed) ?? sealer.open(sealed)
    const size = sealed.length + (plain?.length ?? 0)
    if (plain === null || size > budgetChars / LARGEST_SHARE) return plain
    if (used + size > generationChars) {
      previous = current
      current = new Map()
      used = 0
    }
    current.set(sealed, plain)
    used += size
    return plain
  }
}
