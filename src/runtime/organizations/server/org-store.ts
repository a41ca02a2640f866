import { z } from 'zod'
import type { RecordSchema, RecordStore } from '../../server/lib/store/record-store'
import type { Organization, OrganizationMember, OrganizationsAdapter, Team, UserOrganization } from '../organization-types'
import { inBatches } from '../../shared/values'
import { FOREVER_SECONDS, memberSchema, ORG_ID, ORG_RECORDS, organizationSchema, TEAM_ID, teamSchema } from './org-records'

/** Purpose of the keyed hash that names a member's field in the members map. */
const MEMBER_FIELD = 'org-member'
const slugOwner = z.string().regex(ORG_ID)
const userOrganizationSchema = z.object({ organization: organizationSchema, role: z.string().min(1) })

/** `value` as `schema` reads it back, or a TypeError: nothing is stored that would read as absent. */
function checked<T>(schema: RecordSchema<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value)
  if (parsed.success) return parsed.data
  throw new TypeError(`Organizations store: invalid ${what} (${parsed.error.issues.map(issue => `${issue.path.join('.') || 'value'}: ${issue.message}`).join('; ')})`)
}

/**
 * Organizations, members and teams in the module's record store (the default adapter). Layout:
 * - `org:<id>` → the organization; `org-slug:<slug>` → its id (`writeIfAbsent`: of two claims of
 *   one slug, one wins);
 * - `org-members:<orgId>` map, field `hash('org-member', userId)` → the member (the list), and
 *   `org-membership:<orgId>\0<userId>` → the same member (a membership check in one read);
 * - `user-orgs:<userId>` map, field orgId → `{ organization, role }`: the organization is copied
 *   into each member's map, so a user's list is one map read (renames rewrite the copies);
 * - `org-teams:<orgId>` map, field teamId → the team.
 *
 * Nothing scans keys. Every record lives until deleted ({@link FOREVER_SECONDS}). Reads check the
 * schemas of org-records.ts: a broken record reads as absent. Ids that are not the module's
 * (`org_…`, `team_…`) read as unknown. The module runs the changes of one organization one at a
 * time (a lease): the writes of one change are not atomic together, and a process that dies in the
 * middle of one leaves its first writes (a rename's claimed slug, some members' copies of the old name
 * until the next change rewrites them).
 * @param store The module's record store.
 * @returns The adapter.
 */
export function createStoreOrganizations(store: RecordStore): OrganizationsAdapter {
  const orgKey = (orgId: string) => store.key(ORG_RECORDS.organization, orgId)
  const slugKey = (slug: string) => store.key(ORG_RECORDS.orgSlug, slug)
  const membersKey = (orgId: string) => store.key(ORG_RECORDS.orgMembers, orgId)
  const userOrgsKey = (userId: string) => store.key(ORG_RECORDS.userOrgs, userId)
  const teamsKey = (orgId: string) => store.key(ORG_RECORDS.orgTeams, orgId)
  const membershipKey = (orgId: string, userId: string) => store.key(ORG_RECORDS.orgMembership, `${orgId}\0${userId}`)
  const isOrgId = (orgId: string) => typeof orgId === 'string' && ORG_ID.test(orgId)

  const readOrganization = (orgId: string): Promise<Organization | null> =>
    isOrgId(orgId) ? store.read(orgKey(orgId), organizationSchema) : Promise.resolve(null)

  /** The members map's entries, one per user: the current key's first (after a key rotation a user may also sit under an old field). */
  async function memberEntries(orgId: string): Promise<Array<{ field: string, value: OrganizationMember }>> {
    const entries = await store.mapEntries(membersKey(orgId), memberSchema)
    const byUser = new Map<string, { field: string, value: OrganizationMember }>()
    for (const entry of entries) {
      if (!byUser.has(entry.value.userId)) byUser.set(entry.value.userId, entry)
    }
    return [...byUser.values()]
  }

  /** Removes a slug's claim when it is this organization's (only its own changes touch it then). */
  async function freeSlug(slug: string, orgId: string): Promise<void> {
    if (await store.read(slugKey(slug), slugOwner) === orgId) await store.remove(slugKey(slug))
  }

  /** Claims a slug for an organization; true when it is (or already was) the organization's. */
  async function claimSlug(slug: string, orgId: string): Promise<boolean> {
    return await store.writeIfAbsent(slugKey(slug), orgId, FOREVER_SECONDS) || await store.read(slugKey(slug), slugOwner) === orgId
  }

  /** Writes a member's entry under the current field and drops those of previous storage keys. */
  async function writeMember(orgId: string, member: OrganizationMember): Promise<void> {
    const [field, ...previous] = store.hashes(MEMBER_FIELD, member.userId)
    const membership = membershipKey(orgId, member.userId)
    await store.write(membership, member, FOREVER_SECONDS)
    await Promise.all(membership.previous.map(old => store.remove(store.at(old))))
    await store.mapSet(membersKey(orgId), field!, member, FOREVER_SECONDS)
    await Promise.all(previous.map(old => store.mapDelete(membersKey(orgId), old)))
  }

  const writeUserOrganization = (userId: string, organization: Organization, role: string) =>
    store.mapSet(userOrgsKey(userId), organization.id, { organization, role } satisfies UserOrganization, FOREVER_SECONDS)

  return {
    async createOrganization(organization, creator) {
      const org = checked(organizationSchema, organization, 'organization')
      const member = checked(memberSchema, creator, 'member')
      // The record first: a slug never names an organization that is not there.
      await store.write(orgKey(org.id), org, FOREVER_SECONDS)
      // A retry of a creation that went through finds the slug its own.
      if (!await claimSlug(org.slug, org.id)) {
        await store.remove(orgKey(org.id))
        return 'slug_taken'
      }
      await writeMember(org.id, member)
      await writeUserOrganization(member.userId, org, member.role)
      return 'created'
    },

    getOrganization: readOrganization,

    async updateOrganization(orgId, changes) {
      const current = await readOrganization(orgId)
      if (!current) return null
      const next = checked(organizationSchema, { ...current, name: changes.name ?? current.name, slug: changes.slug ?? current.slug }, 'organization')
      const moved = next.slug !== current.slug
      if (moved && !await claimSlug(next.slug, orgId)) return 'slug_taken'
      await store.write(orgKey(orgId), next, FOREVER_SECONDS)
      if (moved) await freeSlug(current.slug, orgId)
      const members = await memberEntries(orgId)
      await inBatches(members, ({ value }) => writeUserOrganization(value.userId, next, value.role))
      return next
    },

    async deleteOrganization(orgId) {
      if (!isOrgId(orgId)) return
      const org = await readOrganization(orgId)
      // Members' lists first, so that a list never names a deleted organization after this returns.
      const members = await store.mapEntries(membersKey(orgId), memberSchema)
      await inBatches(members, ({ value }) => store.mapDelete(userOrgsKey(value.userId), orgId))
      await inBatches(members, ({ value }) => store.remove(membershipKey(orgId, value.userId)))
      await inBatches(members, ({ field }) => store.mapDelete(membersKey(orgId), field))
      const teams = await store.mapEntries(teamsKey(orgId), teamSchema)
      await inBatches(teams, ({ field }) => store.mapDelete(teamsKey(orgId), field))
      // The slug before the record: a slug never names an organization that is not there.
      if (org) await freeSlug(org.slug, orgId)
      await store.remove(orgKey(orgId))
    },

    async listUserOrganizations(userId) {
      const entries = await store.mapEntries(userOrgsKey(userId), userOrganizationSchema)
      return entries.filter(({ field, value }) => value.organization.id === field).map(({ value }) => value)
    },

    async getMember(orgId, userId) {
      if (!isOrgId(orgId)) return null
      const member = await store.read(membershipKey(orgId, userId), memberSchema)
      return member?.userId === userId ? member : null
    },

    async listMembers(orgId) {
      if (!isOrgId(orgId)) return []
      return (await memberEntries(orgId)).map(({ value }) => value)
    },

    async saveMember(orgId, member) {
      const saved = checked(memberSchema, member, 'member')
      const org = await readOrganization(orgId)
      // No members of an organization that does not exist.
      if (!org) return
      await writeMember(orgId, saved)
      await writeUserOrganization(saved.userId, org, saved.role)
    },

    async removeMember(orgId, userId) {
      if (!isOrgId(orgId)) return
      // The membership record first: a removed member fails every check at once.
      await store.remove(membershipKey(orgId, userId))
      await Promise.all(store.hashes(MEMBER_FIELD, userId).map(field => store.mapDelete(membersKey(orgId), field)))
      await store.mapDelete(userOrgsKey(userId), orgId)
    },

    async listTeams(orgId) {
      if (!isOrgId(orgId)) return []
      const entries = await store.mapEntries(teamsKey(orgId), teamSchema)
      return entries.filter(({ field, value }) => value.id === field).map(({ value }): Team => value)
    },

    async createTeam(orgId, team) {
      const saved = checked(teamSchema, team, 'team')
      // No teams of an organization that does not exist.
      if (!await readOrganization(orgId)) return
      await store.mapSet(teamsKey(orgId), saved.id, saved, FOREVER_SECONDS)
    },

    async deleteTeam(orgId, teamId) {
      if (!isOrgId(orgId) || typeof teamId !== 'string' || !TEAM_ID.test(teamId)) return
      await store.mapDelete(teamsKey(orgId), teamId)
    },
  }
}
