/** An object that may name a user: a provider profile, a host's user row, token claims. */
export interface SubjectSource {
  sub?: unknown
  id?: unknown
  [key: string]: unknown
}

/** A non-empty string or safe integer as a subject (a larger integer may be rounded onto another user's id). */
export function asSubject(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value)
  return undefined
}

/** The subject a user names (a profile, a stored user, claims): its `sub`, else its `id`. */
export function subjectOf(user: SubjectSource | null | undefined): string | undefined {
  if (!user || typeof user !== 'object') return undefined
  return asSubject(user.sub) ?? asSubject(user.id)
}

/**
 * The subject a host's user row names: its `id`, else its `sub`. An `id` carried over from `given`
 * (a provider profile's) does not count, so two providers' users never meet on a raw id.
 */
export function hostSubjectOf(row: SubjectSource | null | undefined, { given }: { given?: SubjectSource } = {}): string | undefined {
  if (!row || typeof row !== 'object') return undefined
  const id = asSubject(row.id)
  const carried = given !== undefined && id !== undefined && id === asSubject(given.id)
  return (carried ? undefined : id) ?? asSubject(row.sub)
}
