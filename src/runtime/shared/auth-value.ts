import type { AuthPageMeta } from '../types/auth'

/** What an `auth` value asks for: `required`, `public` (never protected) or `guest` (page meta only). */
export type AuthRequirement = 'required' | 'public' | 'guest'

/** The one reading of `auth` values (route rules and page meta): `required`, `public`, `guest` or undefined. */
export function resolveAuthValue(value: AuthPageMeta | unknown): AuthRequirement | undefined {
  if (value === true || value === 'required' || value === 'protected') return 'required'
  if (value === false || value === 'public' || value === 'skip') return 'public'
  return value === 'guest' ? 'guest' : undefined
}
