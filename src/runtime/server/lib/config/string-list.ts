/**
 * An option that holds a list of strings (previous secrets or keys), as a list: an environment
 * override may give a single string instead of a JSON array. Empty strings are dropped.
 */
export function stringList(value: unknown): string[] {
  const list: unknown[] = typeof value === 'string' ? [value] : Array.isArray(value) ? value : []
  return list.filter((item): item is string => typeof item === 'string' && item !== '')
}
