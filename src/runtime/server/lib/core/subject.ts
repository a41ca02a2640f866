/** An object that may name a user: a provider profile, a host's user row, token claims. */
export interface SubjectSource {
  sub?: unknown
  id?: unknown
  [key: string]: unknown
}

/**
 * A value as a subject: a non-empty string as it is, a safe integer in decimal (`42` → `'42'`),
 * undefined for anything else (`''`, `NaN`, fractions, booleans, objects, null, and integers
 * beyond 2^53, which JSON parsing may already have rounded onto another user's id: map a string
 * field such as `id_str` instead).
 */
export function asSubject(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value)
  return undefined
}

/**
 * The subject a user as the module knows it names (a provider profile, the user stored with a code
 * or session, token claims): its `sub`, else its `id`. Undefined when it names none.
 */
export function subjectOf(user: SubjectSource | null | undefined): string | undefined {
  if (!user || typeof user !== 'object') return undefined
  return asSubject(user.sub) ?? asSubject(user.id)
}

/**
 * The subject a row of the host's user table names (what `password.findUser`,
 * `impersonation.fetchTarget` and `onUserPersist` return): its `id`, the host's own key, else its
 * `sub`. One rule for all three, so a user logs in, is impersonated and has their sessions revoked
 * under one subject.
 *
 * `given` is the user the module handed to the host: an `id` the row only carries over from it (a
 * provider profile's own `id`, as in `{ ...user, role }`) is not the host's and does not count, so
 * users of two providers never meet on a raw provider id.
 */
export function hostSubjectOf(row: SubjectSource | null | undefined, { given }: { given?: SubjectSource } = {}): string | undefined {
  if (!row || typeof row !== 'object') return undefined
  const id = asSubject(row.id)
  const carried = given !== undefined && id !== undefined && id === asSubject(given.id)
  return (carried ? undefined : id) ?? asSubject(row.sub)
}
