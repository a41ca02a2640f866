/** An object that may name a user: a provider profile, a host's user row, token claims. */
export interface SubjectSource {
  sub?: unknown
  id?: unknown
  [key: string]: unknown
}

/**
 * A value as a subject: a non-empty string as it is, a finite number in decimal (`42` → `'42'`),
 * undefined for anything else (`''`, `NaN`, booleans, objects, null).
 */
export function asSubject(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  return undefined
}

/**
 * The subject (the `sub` claim, the owner of sessions) a user object names, or undefined when it
 * names none. The module decides every subject with it:
 * - a user (provider profile, `findUser`, `impersonation.fetchTarget`, the user stored with a
 *   code or session): its `sub`, else its `id`;
 * - what the host's `onUserPersist` returned (`persisted: true`): its `id`, else its `sub`, so
 *   the host's own id replaces the subject, also when the host answers with the user it was
 *   given (whose `sub` is the provider's) plus its `id`.
 *
 * Each value counts as {@link asSubject} says; one that does not count falls through to the other.
 */
export function subjectOf(user: SubjectSource | null | undefined, { persisted = false }: { persisted?: boolean } = {}): string | undefined {
  if (!user || typeof user !== 'object') return undefined
  const [first, second] = persisted ? [user.id, user.sub] : [user.sub, user.id]
  return asSubject(first) ?? asSubject(second)
}
