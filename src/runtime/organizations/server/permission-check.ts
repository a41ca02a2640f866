/** The roles of a caller in an organization, and whether they grant a permission (`requirePermission`, `hasPermission`). */
import type { H3Event } from 'h3'
import type { AuthClaims } from '../../types/auth'
import type { OrganizationMember } from '../organization-types'
import type { AuthContext } from '../../server/lib/core/context'
import { getAuthHandlers } from '../../server/lib/core/handlers'
import { rolesGrant } from '../../shared/permissions'
import { organizationsAdapter } from './organization-service'
import { ORG_ID } from './org-records'

/** What a permission check is about. */
export interface PermissionScope {
  /**
   * The resource the check is about, passed to the host's `organizations.resolveRoles` as it is; with a
   * `teamId` that is one of the member's teams, the member's role in that team counts too.
   */
  resource?: unknown
  /** The organization to check in (a lookup of the membership); default: the token's active one (`org`, no lookup). */
  organization?: string
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
  const found = await callerRoles(ctx, event, claims, scope)
  return !!found && rolesGrant(ctx.options.organizations?.roles ?? {}, found.roles, permission)
}
