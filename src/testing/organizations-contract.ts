/**
 * The rules of an organizations adapter (see `verifyOrganizationsAdapter` in verify-organizations.ts), each
 * a named check that fails with the first thing it found wrong.
 */
import type { Organization, OrganizationMember, OrganizationsAdapter, Team, UserOrganization } from '../runtime/organizations/organization-types'

/** What a rule works with: the adapter, fresh ids and records, and the checks. */
export interface ContractRun {
  adapter: OrganizationsAdapter
  /** A new organization (fresh id and slug), not stored. */
  organization(name?: string): Organization
  /** A new member record of `userId`. */
  member(userId: string, role: string, extra?: Partial<OrganizationMember>): OrganizationMember
  /** A new team, not stored. */
  team(name?: string): Team
  /** A user id no other run uses. */
  userId(): string
  /** A slug no other run uses. */
  slug(): string
  /** Creates an organization (remembered for clean-up): what the adapter answered. */
  create(organization: Organization, creator: OrganizationMember): Promise<'created' | 'slug_taken'>
  /** Creates an organization with a creator and fails unless the adapter answers `'created'`. */
  created(role?: string): Promise<{ organization: Organization, creator: OrganizationMember }>
  /** Fails the rule with `detail` unless `condition` holds. */
  expect(condition: boolean, detail: string): void
}

/** A rule: its name (what an error message names) and its check. */
export interface ContractRule {
  name: string
  check(run: ContractRun): Promise<void>
}

/** A comparable form of a record: the interface's fields only, `null` as absent, keys sorted. */
export function canonical(value: unknown): string {
  const sorted = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sorted)
    if (v === null || typeof v !== 'object') return v
    return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined && x !== null).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, x]) => [k, sorted(x)]))
  }
  return JSON.stringify(sorted(value)) ?? 'undefined'
}

const pickOrganization = (o: Organization | null | undefined) => o && { id: o.id, name: o.name, slug: o.slug, createdAt: o.createdAt }
const pickMember = (m: OrganizationMember | null | undefined) => m && { userId: m.userId, role: m.role, email: m.email, name: m.name, teams: m.teams, joinedAt: m.joinedAt }
const sortedList = <T>(items: readonly T[], pick: (item: T) => unknown) => items.map(item => canonical(pick(item))).sort()

/** True when two organizations (or nulls) are the same. */
export const sameOrganization = (a: Organization | null | undefined, b: Organization | null | undefined) => canonical(pickOrganization(a)) === canonical(pickOrganization(b))
/** True when two members (or nulls) are the same. */
export const sameMember = (a: OrganizationMember | null | undefined, b: OrganizationMember | null | undefined) => canonical(pickMember(a)) === canonical(pickMember(b))
/** True when two lists of members hold the same members, in any order. */
export const sameMembers = (a: readonly OrganizationMember[], b: readonly OrganizationMember[]) => canonical(sortedList(a, pickMember)) === canonical(sortedList(b, pickMember))
/** True when two lists of a user's organizations are the same, in any order. */
export const sameUserOrganizations = (a: readonly UserOrganization[], b: readonly UserOrganization[]) => {
  const pick = (u: UserOrganization) => ({ organization: pickOrganization(u.organization), role: u.role })
  return canonical(sortedList(a, pick)) === canonical(sortedList(b, pick))
}
/** True when two lists of teams are the same, in any order. */
export const sameTeams = (a: readonly Team[], b: readonly Team[]) => {
  const pick = (t: Team) => ({ id: t.id, name: t.name, createdAt: t.createdAt })
  return canonical(sortedList(a, pick)) === canonical(sortedList(b, pick))
}

/** A value as an error message shows it. */
export const shown = (value: unknown): string => canonical(value)
