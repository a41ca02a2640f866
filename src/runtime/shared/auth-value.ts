import type { AuthPageMeta } from '../types/auth'

/**
 * What an `auth` value asks for: `required` (a logged-in user), `public` (anyone; never
 * protected) or `guest` (logged-out visitors only: page meta; a route rule ignores it).
 */
export type AuthRequirement = 'required' | 'public' | 'guest'

/**
 * The one reading of the `auth` values of route rules (the server's route protection) and of
 * `definePageMeta({ auth })` (the client middleware): `true | 'required' | 'protected'` →
 * `required`, `false | 'public' | 'skip'` → `public`, `'guest'` → `guest`; anything else
 * (no value, a typo) → undefined, as if none were given.
 */
export function resolveAuthValue(value: AuthPageMeta | unknown): AuthRequirement | undefined {
  if (value === true || value === 'required' || value === 'protected') return 'required'
  if (value === false || value === 'public' || value === 'skip') return 'public'
  return value === 'guest' ? 'guest' : undefined
}
