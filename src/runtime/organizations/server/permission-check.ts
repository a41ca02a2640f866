/** The roles of a caller in an organization, and whether they grant a permission (`requirePermission`, `hasPermission`). */
import type { H3Event } from 'h3'
import type { AuthClaims } from '../../types/auth'
import type { OrganizationMember } from '../organization-types'
import type { AuthContext } from '../../server/lib/core/context'
import { getAuthHandlers } from '../../server/lib/core/handlers'
import { PERMISSION, rolesGrant } from '../../shared/permissions'
import { organizationsAdapter } from './organization-service'
import { ORG_ID } from './org-records'

/**
 * What a permission check is about: nothing (the active organization), another organization, or a resource
 * with the organization it belongs to (required: the caller's role in their own organization says nothing
 * about another organization's data).
 */
export type PermissionScope = {
  /** The organization to check in (a lookup of the membership); without it, the token's active one (`org`, no lookup). */
  organization?: string
  resource?: undefined
} | {
  /** The organization the resource belongs to (from the host's own data, never from the request). */
  organization: string
  /**
   * The resource the check is about, passed to the host's `organizations.resolveRoles` as it is; with a
   * `teamId` that is one of the member's teams, the member's role in that team counts too.
   */
  resource: unknown
}

/** The `teamId` of a resource, when it has a string one. */
function teamIdOf(resource: unknown): string | undefined {
  const teamId = resource && typeof resource === 'object' ? (resource as { teamId?: unknown }).teamId : undefined
  return typeof teamId === 'string' && teamId ? teamId : undefined
}

/**
 * The caller's roles in the organization of the check: the token's `orgRole` (its active organization, no
 * lookup) or the stored membership (another organization), the member's role in the resource's team, and the
 * host's `organizations.resolveRoles` (members only). Undefined for a non-member, without an organization, and
 * for an impersonated token (it carries none).
 */
export async function callerRoles(ctx: AuthContext, event: H3Event, claims: AuthClaims, scope: PermissionScope = {}): Promise<{ organization: string, roles: string[] } | undefined> {
  if (claims.impersonation) return undefined
  const active = typeof claims.org === 'string' && typeof claims.orgRole === 'string' ? claims.org : undefined
  const organization = scope.organization ?? active
  if (!organization || !ORG_ID.test(organization)) return undefined
  let member: OrganizationMember | null | undefined
  const roles: string[] = []
  if (organization === active) roles.push(claims.orgRole as string)
  else {
    member = await organizationsAdapter(ctx).getMember(organization, claims.sub)
    if (!member) return undefined
    roles.push(member.role)
  }
  const teamId = teamIdOf(scope.resource)
  if (teamId) {
    member ??= await organizationsAdapter(ctx).getMember(organization, claims.sub)
    const teamRole = member && Object.hasOwn(member.teams, teamId) ? member.teams[teamId] : undefined
    if (teamRole) roles.push(teamRole)
  }
  const resolveRoles = getAuthHandlers().organizations?.resolveRoles
  if (resolveRoles) {
    const extra = await resolveRoles({ user: claims, organization, resource: scope.resource, event })
    if (Array.isArray(extra)) roles.push(...extra.filter((role): role is string => typeof role === 'string'))
  }
  return { organization, roles }
}

/** True when the caller's roles ({@link callerRoles}) grant `permission` in the role table. */
export async function permitted(ctx: AuthContext, event: H3Event, claims: AuthClaims, permission: string, scope?: PermissionScope): Promise<boolean> {
  if (typeof permission !== 'string' || !PERMISSION.test(permission)) throw new TypeError(`Not a permission: ${JSON.stringify(permission)} (expected 'resource:action')`)
  if (scope?.resource !== undefined && scope.organization === undefined) throw new TypeError('A permission check of a resource must name the resource\'s organization ({ resource, organization }): the role in the active organization says nothing about another organization\'s data')
  const found = await callerRoles(ctx, event, claims, scope)
  return !!found && rolesGrant(ctx.options.organizations?.roles ?? {}, found.roles, permission)
}
