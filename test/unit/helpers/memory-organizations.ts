import type { Organization, OrganizationMember, OrganizationsAdapter, Team } from '../../../src/runtime/organizations/organization-types'

/** An organization id of the shape the module accepts (`org_` and 22 characters). */
export const orgId = (name: string) => `org_${name.padEnd(22, '0').slice(0, 22)}`

/** A host's organizations adapter over maps (no locks: the tests here change one thing at a time), with helpers to seed it. */
export function memoryOrganizations() {
  const organizations = new Map<string, Organization>()
  const members = new Map<string, Map<string, OrganizationMember>>()
  const teams = new Map<string, Map<string, Team>>()
  const membersOf = (id: string) => members.get(id) ?? members.set(id, new Map()).get(id)!
  const adapter: OrganizationsAdapter = {
    async createOrganization(organization, creator) {
      if ([...organizations.values()].some(o => o.slug === organization.slug)) return 'slug_taken'
      organizations.set(organization.id, organization)
      membersOf(organization.id).set(creator.userId, creator)
      return 'created'
    },
    getOrganization: async id => organizations.get(id) ?? null,
    async updateOrganization(id, changes) {
      const found = organizations.get(id)
      if (!found) return null
      const updated = { ...found, ...changes }
      organizations.set(id, updated)
      return updated
    },
    async deleteOrganization(id) {
      organizations.delete(id)
      members.delete(id)
      teams.delete(id)
    },
    listUserOrganizations: async userId => [...organizations.values()].flatMap((organization) => {
      const member = members.get(organization.id)?.get(userId)
      return member ? [{ organization, role: member.role }] : []
    }),
    getMember: async (id, userId) => members.get(id)?.get(userId) ?? null,
    listMembers: async id => [...(members.get(id)?.values() ?? [])],
    saveMember: async (id, member) => void membersOf(id).set(member.userId, member),
    removeMember: async (id, userId) => void members.get(id)?.delete(userId),
    listTeams: async id => [...(teams.get(id)?.values() ?? [])],
    createTeam: async (id, team) => void (teams.get(id) ?? teams.set(id, new Map()).get(id)!).set(team.id, team),
    deleteTeam: async (id, teamId) => void teams.get(id)?.delete(teamId),
  }
  /** Creates organization `id` (if new) with `userId` as a member in `role`, and `teams` (team id → role). */
  const join = async (id: string, userId: string, role: string, memberTeams: Record<string, string> = {}) => {
    if (!organizations.has(id)) organizations.set(id, { id, name: id, slug: id.slice(4, 20).toLowerCase().replace(/[^a-z\d]/g, 'x'), createdAt: new Date().toISOString() })
    await adapter.saveMember(id, { userId, role, teams: memberTeams, joinedAt: new Date().toISOString() })
  }
  return { adapter, join }
}
