/**
 * The rules of organizations over their adapter: membership (non-members see 404, never 403),
 * permissions from the role table, no escalation, always an owner. Every change of one organization's
 * members runs under its lease, so rules that read then write hold across processes.
 */
import type { H3Event } from 'h3'
import type { AuthClaims, OrganizationChangePayload } from '../../types/auth'
import type { Organization, OrganizationMember, OrganizationsAdapter, ResolvedOrganizationsOptions, Team } from '../organization-types'
import type { AuthContext } from '../../server/lib/core/context'
import { authError, message } from '../../server/lib/edge/errors'
import { emitHook, getAuthHandlers } from '../../server/lib/core/handlers'
import { markClaimsStale } from '../../server/lib/core/stale-claims'
import { randomToken } from '../../server/lib/store/crypto'
import { withLease } from '../../server/lib/edge/lease'
import { rolesGrant, rolesInclude } from '../../shared/permissions'
import { ORG_ID, ORG_RECORDS, SLUG, TEAM_ID } from './org-records'
import { createStoreOrganizations } from './org-store'
import { inBatches, oncePer } from '../../shared/values'
import type { SecurityEventType } from '../../shared/event-catalog'
import { securityEvent } from '../../server/lib/edge/security-event'

/** The parsed `organizations` options (the feature is on wherever this runs). */
export function orgOptions(ctx: AuthContext): ResolvedOrganizationsOptions {
  return ctx.options.organizations as ResolvedOrganizationsOptions
}

const storeAdapter = oncePer((ctx: AuthContext) => createStoreOrganizations(ctx.store))

/** Where organizations live: the host's adapter, else the module's store. */
export function organizationsAdapter(ctx: AuthContext): OrganizationsAdapter {
  return getAuthHandlers().organizations?.adapter ?? storeAdapter(ctx)
}

/** An organization and the caller's membership of it. */
export interface Membership {
  organization: Organization
  member: OrganizationMember
}

const notFound = () => authError('not_found', message('no_such_organization'))

/** A well-formed organization id, else 404 (the same answer as for an unknown one). */
export function requireOrgId(orgId: string | undefined): string {
  if (!orgId || !ORG_ID.test(orgId)) throw notFound()
  return orgId
}

/** The organization `orgId` and `userId`'s membership: 404 alike for a malformed id, an unknown one and a non-member. */
export async function membershipOf(ctx: AuthContext, orgId: string | undefined, userId: string): Promise<Membership> {
  const id = requireOrgId(orgId)
  const adapter = organizationsAdapter(ctx)
  const [organization, member] = await Promise.all([adapter.getOrganization(id), adapter.getMember(id, userId)])
  if (!organization || !member) throw notFound()
  return { organization, member }
}

/** {@link membershipOf}, then 403 `permission_denied` unless the caller's role grants `permission`. */
export async function requireOrgPermission(ctx: AuthContext, orgId: string | undefined, caller: AuthClaims, permission: string): Promise<Membership> {
  const membership = await membershipOf(ctx, orgId, caller.sub)
  if (!rolesGrant(orgOptions(ctx).roles, [membership.member.role], permission)) throw authError('permission_denied', message('role_may_not', { permission: permission.replace(':', ' ') }))
  return membership
}

/** 400 `unknown_role` for a role the table does not name. */
export function requireRole(ctx: AuthContext, role: string): string {
  if (!Object.hasOwn(orgOptions(ctx).roles, role)) throw authError('unknown_role', message('unknown_role_named', { role: JSON.stringify(role.slice(0, 40)) }))
  return role
}

/**
 * 403 `role_not_grantable` unless every permission of `role` is one the caller's role has (no escalation).
 * A role the table no longer names (a redeploy dropped it) is the owner role's to change.
 */
export function requireGrantable(ctx: AuthContext, callerRole: string, role: string): void {
  if (!grantable(ctx, callerRole, role)) throw authError('role_not_grantable')
}

/** True when `callerRole` may grant or change `role` ({@link requireGrantable}). */
export function grantable(ctx: AuthContext, callerRole: string, role: string): boolean {
  const { roles, creatorRole } = orgOptions(ctx)
  return (!Object.hasOwn(roles, role) && callerRole === creatorRole) || rolesInclude(roles, [callerRole], role)
}

/** 400 `bad_request` for a name that is empty or longer than `maxNameLength`. */
export function checkName(ctx: AuthContext, name: string): string {
  const trimmed = name.trim()
  const max = orgOptions(ctx).maxNameLength
  if (!trimmed || trimmed.length > max) throw authError('bad_request', message('name_length', { max }))
  return trimmed
}

/** Runs `fn` while holding the organization's lease (one change of its members at a time, every process). */
export function withOrganization<T>(ctx: AuthContext, orgId: string, fn: () => Promise<T>): Promise<T> {
  return withLease(ctx.store, ctx.store.key(ORG_RECORDS.orgLock, orgId), fn)
}

/** The security event of each `svc:org:*` hook. */
const ORG_EVENTS = {
  'svc:org:created': 'org.created',
  'svc:org:updated': 'org.updated',
  'svc:org:deleted': 'org.deleted',
  'svc:org:memberAdded': 'org.member_added',
  'svc:org:memberUpdated': 'org.member_updated',
  'svc:org:memberRemoved': 'org.member_removed',
  'svc:org:invitationCreated': 'org.invitation_created',
  'svc:org:invitationRevoked': 'org.invitation_revoked',
  'svc:org:teamCreated': 'org.team_created',
  'svc:org:teamDeleted': 'org.team_deleted',
  'svc:org:teamMemberUpdated': 'org.team_member_updated',
  'svc:org:teamMemberRemoved': 'org.team_member_removed',
} as const satisfies Record<string, SecurityEventType>

/** Reports a change of an organization (its security event, then its `svc:org:*` hook); `subject` is the member it is about. */
export async function orgHook(ctx: AuthContext, name: keyof typeof ORG_EVENTS, payload: OrganizationChangePayload): Promise<void> {
  const { actor, organization, member, invitation, team, event } = payload
  await securityEvent(ctx, event, {
    type: ORG_EVENTS[name],
    caller: actor,
    subject: member?.userId ?? null,
    organization: organization.id,
    details: { role: member?.role ?? invitation?.role, previousRole: member?.previousRole, team: team?.id, invitation: invitation?.id },
  })
  return emitHook(ctx, name, payload)
}

const now = () => new Date().toISOString()

/** A slug from a name: lowercase ASCII words joined by `-` (with a random tail when that is taken or too short). */
function slugOf(name: string, tail = ''): string {
  const base = name.normalize('NFKD').replace(/[\u0300-\u036F]/g, '').toLowerCase().replace(/[^a-z\d]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40).replace(/-+$/, '')
  const slug = [base, tail].filter(Boolean).join('-')
  return SLUG.test(slug) ? slug : `org-${randomToken(6).toLowerCase().replace(/[^a-z\d]/g, '0')}`
}

/** The member of `caller` as stored for the member list (email and name as of now). */
export function memberOf(caller: AuthClaims, role: string): OrganizationMember {
  return { userId: caller.sub, role, email: stringClaim(caller.email), name: stringClaim(caller.name), teams: {}, joinedAt: now() }
}

const stringClaim = (value: unknown) => (typeof value === 'string' && value ? value : undefined)

/** POST orgs: a new organization whose creator gets `creatorRole`; a given slug that is taken is 409 `slug_taken`. */
export async function createOrganization(ctx: AuthContext, event: H3Event, caller: AuthClaims, input: { name: string, slug?: string }): Promise<{ organization: Organization, role: string }> {
  const name = checkName(ctx, input.name)
  const { creatorRole, maxOrganizationsPerUser } = orgOptions(ctx)
  const adapter = organizationsAdapter(ctx)
  // One creation per user at a time: the limit is counted, then kept.
  return withLease(ctx.store, ctx.store.key(ORG_RECORDS.createdOrgs, caller.sub), async () => {
    if (maxOrganizationsPerUser > 0) {
      const owned = (await adapter.listUserOrganizations(caller.sub)).filter(entry => entry.role === creatorRole).length
      if (owned >= maxOrganizationsPerUser) throw authError('organization_limit')
    }
    const creator = memberOf(caller, creatorRole)
    for (let attempt = 0; attempt < 5; attempt++) {
      const slug = input.slug ?? slugOf(name, attempt ? randomToken(3).toLowerCase().replace(/[^a-z\d]/g, '0') : '')
      const organization: Organization = { id: `org_${randomToken(16)}`, name, slug, createdAt: now() }
      if (await adapter.createOrganization(organization, creator) === 'created') {
        await orgHook(ctx, 'svc:org:created', { actor: caller, organization, member: { userId: caller.sub, role: creatorRole }, event })
        return { organization, role: creatorRole }
      }
      if (input.slug !== undefined) break
    }
    throw authError('slug_taken')
  })
}

/** PATCH orgs/:orgId (`org:update`): a new name or slug. */
export async function updateOrganization(ctx: AuthContext, event: H3Event, caller: AuthClaims, orgId: string | undefined, input: { name?: string, slug?: string }): Promise<{ organization: Organization }> {
  const { organization } = await requireOrgPermission(ctx, orgId, caller, 'org:update')
  const changes = { ...(input.name !== undefined ? { name: checkName(ctx, input.name) } : {}), ...(input.slug !== undefined ? { slug: input.slug } : {}) }
  const updated = await withOrganization(ctx, organization.id, () => organizationsAdapter(ctx).updateOrganization(organization.id, changes))
  if (updated === 'slug_taken') throw authError('slug_taken')
  if (!updated) throw notFound()
  await orgHook(ctx, 'svc:org:updated', { actor: caller, organization: updated, event })
  return { organization: updated }
}

/** DELETE orgs/:orgId (`org:delete`): the organization, its members, teams and invitations; members' tokens go stale. */
export async function deleteOrganization(ctx: AuthContext, event: H3Event, caller: AuthClaims, orgId: string | undefined, dropInvitations: (orgId: string) => Promise<void>): Promise<{ success: true }> {
  const { organization } = await requireOrgPermission(ctx, orgId, caller, 'org:delete')
  const adapter = organizationsAdapter(ctx)
  await withOrganization(ctx, organization.id, async () => {
    const members = await adapter.listMembers(organization.id)
    const markAll = () => inBatches(members, member => markClaimsStale(ctx, member.userId))
    await markAll()
    await adapter.deleteOrganization(organization.id)
    await dropInvitations(organization.id)
    await markAll()
  })
  await orgHook(ctx, 'svc:org:deleted', { actor: caller, organization, event })
  return { success: true }
}

/** A member as the member list shows it: teams with their names. */
export interface MemberView {
  userId: string
  email?: string
  name?: string
  role: string
  teams: Array<{ id: string, name: string, role: string }>
}

/** The member list's view of a member (teams that no longer exist are left out). */
export function memberView(member: OrganizationMember, teams: ReadonlyMap<string, Team>): MemberView {
  return {
    userId: member.userId,
    ...(member.email ? { email: member.email } : {}),
    ...(member.name ? { name: member.name } : {}),
    role: member.role,
    teams: Object.entries(member.teams).flatMap(([id, role]) => {
      const team = teams.get(id)
      return team ? [{ id, name: team.name, role }] : []
    }),
  }
}

/** The teams of an organization by id. */
export async function teamsOf(ctx: AuthContext, orgId: string): Promise<Map<string, Team>> {
  return new Map((await organizationsAdapter(ctx).listTeams(orgId)).map(team => [team.id, team]))
}

/** GET orgs/:orgId/members (`member:read`). */
export async function listMembers(ctx: AuthContext, caller: AuthClaims, orgId: string | undefined): Promise<{ members: MemberView[] }> {
  const { organization } = await requireOrgPermission(ctx, orgId, caller, 'member:read')
  const adapter = organizationsAdapter(ctx)
  const [members, teams] = await Promise.all([adapter.listMembers(organization.id), teamsOf(ctx, organization.id)])
  return { members: members.sort((a, b) => a.joinedAt.localeCompare(b.joinedAt)).map(member => memberView(member, teams)) }
}

/**
 * 409 `last_owner` when `target` is the organization's only owner. Owners are counted by their membership,
 * not by the list alone: a removal that stopped half-way leaves no owner that counts.
 */
async function keepAnOwner(ctx: AuthContext, orgId: string, target: OrganizationMember): Promise<void> {
  const { creatorRole } = orgOptions(ctx)
  if (target.role !== creatorRole) return
  const adapter = organizationsAdapter(ctx)
  const listed = (await adapter.listMembers(orgId)).filter(member => member.role === creatorRole && member.userId !== target.userId)
  const others = await Promise.all(listed.map(member => adapter.getMember(orgId, member.userId)))
  if (!others.some(member => member?.role === creatorRole)) throw authError('last_owner')
}

/**
 * The caller's and the target's memberships for a change of the target: the caller needs `permission`
 * and a role covering the target's (no one changes a member above them); the target must be a member (404).
 */
async function memberChange(ctx: AuthContext, caller: AuthClaims, orgId: string | undefined, userId: string | undefined, permission: string): Promise<Membership & { target: OrganizationMember }> {
  const membership = await requireOrgPermission(ctx, orgId, caller, permission)
  const target = userId ? await organizationsAdapter(ctx).getMember(membership.organization.id, userId) : null
  if (!target) throw authError('not_found', message('no_such_member'))
  requireGrantable(ctx, membership.member.role, target.role)
  return { ...membership, target }
}

/**
 * Runs a change of what `userId`'s tokens claim, with their stale marks on both sides: before it (a mark
 * that cannot be stored stops the change, so no change goes unmarked), and after it (a token minted
 * between the two read the old role).
 */
async function changeClaims(ctx: AuthContext, userId: string, change: () => Promise<void>): Promise<void> {
  await markClaimsStale(ctx, userId)
  await change()
  await markClaimsStale(ctx, userId)
}

/** PATCH orgs/:orgId/members/:userId (`member:update`): never one's own role, never above one's own, never the last owner away. */
export async function changeMemberRole(ctx: AuthContext, event: H3Event, caller: AuthClaims, orgId: string | undefined, userId: string | undefined, role: string): Promise<{ member: MemberView }> {
  requireRole(ctx, role)
  if (userId === caller.sub) {
    await membershipOf(ctx, orgId, caller.sub)
    throw authError('own_role')
  }
  const adapter = organizationsAdapter(ctx)
  // Outsiders are answered before the lease: they never wait on it, nor hold it.
  await memberChange(ctx, caller, orgId, userId, 'member:update')
  const { organization, previousRole, member } = await withOrganization(ctx, requireOrgId(orgId), async () => {
    // Read again under the lease: the roles may have changed since.
    const change = await memberChange(ctx, caller, orgId, userId, 'member:update')
    requireGrantable(ctx, change.member.role, role)
    if (role !== orgOptions(ctx).creatorRole) await keepAnOwner(ctx, change.organization.id, change.target)
    const updated = { ...change.target, role }
    await changeClaims(ctx, updated.userId, () => adapter.saveMember(change.organization.id, updated))
    return { organization: change.organization, previousRole: change.target.role, member: updated }
  })
  if (previousRole !== role) await orgHook(ctx, 'svc:org:memberUpdated', { actor: caller, organization, member: { userId: member.userId, role, previousRole }, event })
  return { member: memberView(member, await teamsOf(ctx, organization.id)) }
}

/** DELETE orgs/:orgId/members/:userId: one's own id leaves; another's needs `member:delete` and a role covering theirs. */
export async function removeMember(ctx: AuthContext, event: H3Event, caller: AuthClaims, orgId: string | undefined, userId: string | undefined): Promise<{ success: true }> {
  const leaving = userId === caller.sub
  const check = () => (leaving ? membershipOf(ctx, orgId, caller.sub).then(found => ({ ...found, target: undefined })) : memberChange(ctx, caller, orgId, userId, 'member:delete'))
  // Outsiders are answered before the lease: they never wait on it, nor hold it.
  await check()
  const { organization, target } = await withOrganization(ctx, requireOrgId(orgId), async () => {
    const change = await check()
    const gone = change.target ?? change.member
    await keepAnOwner(ctx, change.organization.id, gone)
    await changeClaims(ctx, gone.userId, () => organizationsAdapter(ctx).removeMember(change.organization.id, gone.userId))
    return { organization: change.organization, target: gone }
  })
  await orgHook(ctx, 'svc:org:memberRemoved', { actor: caller, organization, member: { userId: target.userId, previousRole: target.role }, event })
  return { success: true }
}

/** GET orgs: the caller's organizations with the caller's role, by name. */
export async function listOrganizations(ctx: AuthContext, caller: AuthClaims): Promise<{ organizations: Array<{ id: string, name: string, slug: string, role: string }> }> {
  const entries = await organizationsAdapter(ctx).listUserOrganizations(caller.sub)
  return {
    organizations: entries
      .map(({ organization, role }) => ({ id: organization.id, name: organization.name, slug: organization.slug, role }))
      .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id)),
  }
}

/** GET orgs/:orgId: the organization and the caller's role (404 for non-members). */
export async function getOrganization(ctx: AuthContext, caller: AuthClaims, orgId: string | undefined): Promise<{ organization: Organization, role: string }> {
  const { organization, member } = await membershipOf(ctx, orgId, caller.sub)
  return { organization, role: member.role }
}

/** POST orgs/:orgId/teams (`team:create`). */
export async function createTeam(ctx: AuthContext, event: H3Event, caller: AuthClaims, orgId: string | undefined, input: { name: string }): Promise<{ team: Team }> {
  const { organization } = await requireOrgPermission(ctx, orgId, caller, 'team:create')
  const team: Team = { id: `team_${randomToken(16)}`, name: checkName(ctx, input.name), createdAt: now() }
  const adapter = organizationsAdapter(ctx)
  await withOrganization(ctx, organization.id, async () => {
    if ((await adapter.listTeams(organization.id)).length >= orgOptions(ctx).maxTeams) throw authError('team_limit')
    await adapter.createTeam(organization.id, team)
  })
  await orgHook(ctx, 'svc:org:teamCreated', { actor: caller, organization, team, event })
  return { team }
}

/** GET orgs/:orgId/teams (`team:read`): teams with how many members each has. */
export async function listTeams(ctx: AuthContext, caller: AuthClaims, orgId: string | undefined): Promise<{ teams: Array<Team & { members: number }> }> {
  const { organization } = await requireOrgPermission(ctx, orgId, caller, 'team:read')
  const adapter = organizationsAdapter(ctx)
  const [teams, members] = await Promise.all([adapter.listTeams(organization.id), adapter.listMembers(organization.id)])
  const counts = new Map<string, number>()
  for (const member of members) for (const teamId of Object.keys(member.teams)) counts.set(teamId, (counts.get(teamId) ?? 0) + 1)
  return {
    teams: teams
      .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id))
      .map(team => ({ ...team, members: counts.get(team.id) ?? 0 })),
  }
}

/** The team `teamId` of an organization, else 404. */
async function teamOf(ctx: AuthContext, orgId: string, teamId: string | undefined): Promise<Team> {
  const team = teamId && TEAM_ID.test(teamId) ? (await teamsOf(ctx, orgId)).get(teamId) : undefined
  if (!team) throw authError('not_found', message('no_such_team'))
  return team
}

/** DELETE orgs/:orgId/teams/:teamId (`team:delete`): the team, and its place in members' teams. */
export async function deleteTeam(ctx: AuthContext, event: H3Event, caller: AuthClaims, orgId: string | undefined, teamId: string | undefined): Promise<{ success: true }> {
  const { organization } = await requireOrgPermission(ctx, orgId, caller, 'team:delete')
  const adapter = organizationsAdapter(ctx)
  const team = await withOrganization(ctx, organization.id, async () => {
    const found = await teamOf(ctx, organization.id, teamId)
    await adapter.deleteTeam(organization.id, found.id)
    const members = (await adapter.listMembers(organization.id)).filter(member => Object.hasOwn(member.teams, found.id))
    await inBatches(members, (member) => {
      const { [found.id]: _removed, ...teams } = member.teams
      return adapter.saveMember(organization.id, { ...member, teams })
    })
    return found
  })
  await orgHook(ctx, 'svc:org:teamDeleted', { actor: caller, organization, team, event })
  return { success: true }
}

/** PUT orgs/:orgId/teams/:teamId/members/:userId (`team:update`): a member joins a team or gets another role in it (no escalation). */
export async function setTeamMember(ctx: AuthContext, event: H3Event, caller: AuthClaims, orgId: string | undefined, teamId: string | undefined, userId: string | undefined, role: string): Promise<{ member: MemberView }> {
  requireRole(ctx, role)
  const { organization } = await requireOrgPermission(ctx, orgId, caller, 'team:update')
  // Nobody sets their own team role: a role given by someone else is the only kind that can reach above one's own.
  if (userId === caller.sub) throw authError('own_role')
  const adapter = organizationsAdapter(ctx)
  const { member, team } = await withOrganization(ctx, organization.id, async () => {
    const change = await memberChange(ctx, caller, orgId, userId, 'team:update')
    requireGrantable(ctx, change.member.role, role)
    const found = await teamOf(ctx, organization.id, teamId)
    const current = change.target.teams[found.id]
    if (current !== undefined) requireGrantable(ctx, change.member.role, current)
    const updated = { ...change.target, teams: { ...change.target.teams, [found.id]: role } }
    await adapter.saveMember(organization.id, updated)
    return { member: updated, team: found }
  })
  await orgHook(ctx, 'svc:org:teamMemberUpdated', { actor: caller, organization, team, member: { userId: member.userId, role }, event })
  return { member: memberView(member, await teamsOf(ctx, organization.id)) }
}

/** DELETE orgs/:orgId/teams/:teamId/members/:userId: one's own id leaves the team; another's needs `team:update`. */
export async function removeTeamMember(ctx: AuthContext, event: H3Event, caller: AuthClaims, orgId: string | undefined, teamId: string | undefined, userId: string | undefined): Promise<{ success: true }> {
  const leaving = userId === caller.sub
  const { organization } = leaving ? await membershipOf(ctx, orgId, caller.sub) : await requireOrgPermission(ctx, orgId, caller, 'team:update')
  const adapter = organizationsAdapter(ctx)
  const { team, target } = await withOrganization(ctx, organization.id, async () => {
    const change = leaving ? { ...(await membershipOf(ctx, orgId, caller.sub)), target: undefined } : await memberChange(ctx, caller, orgId, userId, 'team:update')
    const who = change.target ?? change.member
    const found = await teamOf(ctx, organization.id, teamId)
    if (!Object.hasOwn(who.teams, found.id)) throw authError('not_found', message('not_team_member'))
    if (change.target) requireGrantable(ctx, change.member.role, who.teams[found.id]!)
    const { [found.id]: _removed, ...teams } = who.teams
    await adapter.saveMember(organization.id, { ...who, teams })
    return { team: found, target: who }
  })
  await orgHook(ctx, 'svc:org:teamMemberRemoved', { actor: caller, organization, team, member: { userId: target.userId }, event })
  return { success: true }
}
