/**
 * A plain in-memory organizations adapter, as a host might write one over its own database, with
 * switches that break one rule each: what `verifyOrganizationsAdapter` must catch.
 */
import type { Organization, OrganizationMember, OrganizationsAdapter, Team } from '../../../src/runtime/organizations/organization-types'

/**
 * - `slug-not-unique`: a taken slug is not refused;
 * - `slug-check-then-set`: the slug is checked, then (after an await) written: concurrent creations all win;
 * - `old-slug-kept`: a slug change keeps the old slug taken;
 * - `delete-keeps-user-lists`: deleteOrganization leaves the organization in its members' lists;
 * - `rename-not-in-user-lists`: a user's list keeps the name the organization had when the user joined;
 * - `teams-not-isolated`: teams live in one list for every organization;
 * - `member-found-anywhere`: getMember finds a user in whichever organization the user is a member of;
 * - `role-not-in-user-lists`: a role change is not written to the user's list.
 */
export type AdapterBug = 'slug-not-unique' | 'slug-check-then-set' | 'old-slug-kept' | 'delete-keeps-user-lists' | 'rename-not-in-user-lists' | 'teams-not-isolated' | 'member-found-anywhere' | 'role-not-in-user-lists'

const tick = () => new Promise<void>(resolve => setTimeout(resolve, 1))
const copy = <T>(value: T): T => structuredClone(value)

/** The adapter, with `bug` (if any) switched on. */
export function organizationsWithBug(bug?: AdapterBug): OrganizationsAdapter {
  const orgs = new Map<string, Organization>()
  const slugs = new Map<string, string>()
  const members = new Map<string, Map<string, OrganizationMember>>()
  const teams = new Map<string, Map<string, Team>>()
  const allTeams = new Map<string, Team>()
  /** userId → orgId → role and the organization as the user's list shows it. */
  const userOrgs = new Map<string, Map<string, { organization: Organization, role: string }>>()
  const listOf = (userId: string) => userOrgs.get(userId) ?? userOrgs.set(userId, new Map()).get(userId)!
  const membersOf = (orgId: string) => members.get(orgId) ?? members.set(orgId, new Map()).get(orgId)!
  const teamsOf = (orgId: string) => teams.get(orgId) ?? teams.set(orgId, new Map()).get(orgId)!

  return {
    async createOrganization(organization, creator) {
      if (bug === 'slug-check-then-set') {
        if (slugs.has(organization.slug)) return 'slug_taken'
        await tick()
      }
      else if (bug !== 'slug-not-unique' && slugs.has(organization.slug)) return 'slug_taken'
      slugs.set(organization.slug, organization.id)
      orgs.set(organization.id, copy(organization))
      membersOf(organization.id).set(creator.userId, copy(creator))
      listOf(creator.userId).set(organization.id, { organization: copy(organization), role: creator.role })
      return 'created'
    },
    getOrganization: async orgId => copy(orgs.get(orgId) ?? null),
    async updateOrganization(orgId, changes) {
      const current = orgs.get(orgId)
      if (!current) return null
      const next = { ...current, ...changes }
      if (next.slug !== current.slug) {
        if (slugs.has(next.slug)) return 'slug_taken'
        slugs.set(next.slug, orgId)
        if (bug !== 'old-slug-kept') slugs.delete(current.slug)
      }
      orgs.set(orgId, next)
      if (bug !== 'rename-not-in-user-lists') {
        for (const member of membersOf(orgId).values()) listOf(member.userId).set(orgId, { organization: copy(next), role: member.role })
      }
      return copy(next)
    },
    async deleteOrganization(orgId) {
      const org = orgs.get(orgId)
      if (!org) return
      if (bug !== 'delete-keeps-user-lists') {
        for (const userId of membersOf(orgId).keys()) listOf(userId).delete(orgId)
      }
      members.delete(orgId)
      teams.delete(orgId)
      slugs.delete(org.slug)
      orgs.delete(orgId)
    },
    listUserOrganizations: async userId => [...listOf(userId).values()].map(copy),
    async getMember(orgId, userId) {
      if (bug === 'member-found-anywhere') return copy([...members.values()].find(m => m.has(userId))?.get(userId) ?? null)
      return copy(members.get(orgId)?.get(userId) ?? null)
    },
    listMembers: async orgId => [...(members.get(orgId)?.values() ?? [])].map(copy),
    async saveMember(orgId, member) {
      const org = orgs.get(orgId)
      if (!org) return
      const known = listOf(member.userId).has(orgId)
      membersOf(orgId).set(member.userId, copy(member))
      if (!known || bug !== 'role-not-in-user-lists') listOf(member.userId).set(orgId, { organization: copy(org), role: member.role })
    },
    async removeMember(orgId, userId) {
      members.get(orgId)?.delete(userId)
      listOf(userId).delete(orgId)
    },
    listTeams: async orgId => [...(bug === 'teams-not-isolated' ? allTeams : teams.get(orgId) ?? new Map<string, Team>()).values()].map(copy),
    async createTeam(orgId, team) {
      if (!orgs.has(orgId)) return
      if (bug === 'teams-not-isolated') allTeams.set(team.id, copy(team))
      else teamsOf(orgId).set(team.id, copy(team))
    },
    async deleteTeam(orgId, teamId) {
      if (bug === 'teams-not-isolated') allTeams.delete(teamId)
      else teams.get(orgId)?.delete(teamId)
    },
  }
}
