import { z } from 'zod'
import type { OrganizationsOptions, ResolvedOrganizationsOptions } from '../organization-types'
import { crossChecks, duration, got, int, limit, relativePath, schemaErrors, type Checked, type SameType } from '../../server/lib/config/schema'
import { PERMISSION, rolesInclude } from '../../shared/permissions'

/** A role name: 1–32 of `[A-Za-z0-9_-]`. */
export const ROLE_NAME = /^[\w-]{1,32}$/

/** The roles of a build that sets none. */
export const DEFAULT_ROLES = {
  owner: ['*'],
  admin: ['org:read', 'org:update', 'member:*', 'invitation:*', 'team:*'],
  member: ['org:read', 'member:read', 'team:read'],
}

const roleTable = z.record(
  z.string().regex(ROLE_NAME, 'role names must be 1 to 32 letters, digits, \'_\' or \'-\'.'),
  z.array(z.string().regex(PERMISSION, 'permissions must be \'resource:action\', \'resource:*\' or \'*\'.'), { error: 'must be a list of permissions.' }).max(200),
  { error: 'must be an object of role name → permissions.' },
).refine(table => Object.keys(table).length > 0 && Object.keys(table).length <= 50, 'must name 1 to 50 roles.')

/** The options of organizations (`svcAuth.organizations`); set (even to `{}`) turns them on. */
export const organizationsSchema = z.object({
  roles: roleTable.default(DEFAULT_ROLES),
  creatorRole: z.string({ error: 'must be a role name.' }).default('owner'),
  defaultRole: z.string({ error: 'must be a role name.' }).default('member'),
  invitationTTL: duration(7 * 86400, { min: 60, max: 90 * 86400 }),
  invitationPath: relativePath('/auth/invitation', 'must be a path starting with \'/\''),
  redirectAfterAccept: relativePath('/'),
  maxNameLength: int(1, 'must be a whole number from 1 to 500.', 500).default(100),
  maxTeams: int(1, 'must be a whole number from 1 to 10000.', 10000).default(200),
  maxOrganizationsPerUser: limit.default(50),
  invitationsPerInviter: limit.default(50),
  invitationsPerOrganization: limit.default(500),
}, { error: 'must be an object.' }).superRefine(...crossChecks<ResolvedOrganizationsOptions>((o) => {
  const roles = o.roles && typeof o.roles === 'object' ? o.roles : {}
  const named = (role: unknown) => typeof role === 'string' && Object.hasOwn(roles, role)
  return [
    !named(o.creatorRole) && ['creatorRole', got('must be one of the roles')({ input: o.creatorRole })],
    !named(o.defaultRole) && ['defaultRole', got('must be one of the roles')({ input: o.defaultRole })],
    named(o.creatorRole) && Object.keys(roles).some(role => !rolesInclude(roles, [o.creatorRole], role))
    && ['creatorRole', `must hold every permission of every role (give it '*'): an owner can manage every member (got ${JSON.stringify(o.creatorRole)}).`],
  ]
}))

export type OrganizationsOptionsChecked = Checked<SameType<z.output<typeof organizationsSchema>, ResolvedOrganizationsOptions>>

/** True when `organizations` is set (an object, even empty). */
export function isOrganizationsEnabled(options: { organizations?: unknown }): options is { organizations: OrganizationsOptions } {
  const value = options.organizations
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Every mistake in `svcAuth.organizations`, one message each (none when it is off). */
export function validateOrganizationsOptions(options: { organizations?: unknown }): string[] {
  if (options.organizations === undefined || options.organizations === false) return []
  return schemaErrors(organizationsSchema, options.organizations, 'svcAuth.organizations')
}
