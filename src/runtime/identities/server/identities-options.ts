import { z } from 'zod'
import type { IdentitiesOptions } from '../identity-types'
import { bool, schemaErrors, type Checked, type SameType } from '../../server/lib/config/schema'

/** The options of linked identities (`svcAuth.identities`); set (even to `{}`) turns linking on. */
export const identitiesSchema = z.object({
  linkByEmail: bool.default(false),
}, { error: 'must be an object.' })

export type IdentitiesOptionsChecked = Checked<SameType<z.output<typeof identitiesSchema>, Required<IdentitiesOptions>>>

/** True when `identities` is set (an object, even empty). */
export function isIdentitiesEnabled(options: { identities?: unknown }): options is { identities: IdentitiesOptions } {
  const value = options.identities
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Every mistake in `svcAuth.identities`, one message each (none when it is off). */
export function validateIdentitiesOptions(options: { identities?: unknown }): string[] {
  if (options.identities === undefined || options.identities === false) return []
  return schemaErrors(identitiesSchema, options.identities, 'svcAuth.identities')
}
