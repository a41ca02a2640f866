/**
 * Organizations as a core feature: option checks and parsing, the `org` and `orgRole` claims of a session's
 * tokens (its active organization), and the stale marks a role change or a removal sets.
 */
import type { AuthFeature } from '../../server/lib/core/context'
import { isOrganizationsEnabled, organizationsSchema, validateOrganizationsOptions } from './organizations-options'
import { organizationClaims } from './active-organization'

/** The claims only organizations set: a custom claim of these names could forge a role. */
export const ORGANIZATION_CLAIMS = ['org', 'orgRole'] as const

export default {
  name: 'organizations',
  optionErrors: options => validateOrganizationsOptions(options),
  parseOptions: options => (isOrganizationsEnabled(options) ? { ...options, organizations: organizationsSchema.parse(options.organizations) } : options),
  ownClaims: options => (isOrganizationsEnabled(options) ? ORGANIZATION_CLAIMS : []),
  marksClaimsStale: options => isOrganizationsEnabled(options),
  sessionClaims: (ctx, session) => (isOrganizationsEnabled(ctx.options) ? organizationClaims(ctx, session) : Promise.resolve({})),
} satisfies AuthFeature
