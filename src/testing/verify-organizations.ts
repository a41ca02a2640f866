import type { Organization, OrganizationMember, OrganizationsAdapter, Team } from '../runtime/organizations/organization-types'
import type { ContractRun } from './organizations-contract'
import { RULES } from './organizations-rules'
import { checkRules, expectRule, now, randomText } from './contract-rules'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
const SLUG_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'

/**
 * Proves an organizations adapter (`defineAuthHandlers({ organizations: { adapter } })`) against
 * the module's contract: organizations created, read, renamed, moved to another slug and deleted;
 * slugs unique, also under 50 concurrent creations, and freed by a slug change or a deletion;
 * members saved, replaced, removed and listed; each user's organizations listed with the role in
 * each, following role changes, renames and deletions; teams created, listed and deleted; isolation
 * between organizations; unknown ids reading as null or empty.
 *
 * Works with any test runner (it imports none): it resolves when every rule holds and throws an
 * Error naming the first broken rule. Every run uses fresh random ids and slugs (`org_…`, `team_…`,
 * `t-…`) and deletes the organizations it created, so it can run against a shared database.
 * @param create Makes the adapter to check (called once).
 * @example
 * ```ts
 * import { it } from 'vitest'
 * import { verifyOrganizationsAdapter } from 'nuxt-svc-auth/testing'
 * import { createPostgresOrganizations } from '../server/organizations-adapter'
 *
 * it('our organizations adapter keeps the contract', async () => {
 *   await verifyOrganizationsAdapter(() => createPostgresOrganizations(testDatabase))
 * }, 60_000)
 * ```
 */
export async function verifyOrganizationsAdapter(create: () => OrganizationsAdapter | Promise<OrganizationsAdapter>): Promise<void> {
  const adapter = await create()
  const createdIds: string[] = []
  const run: ContractRun = {
    adapter,
    organization: (name = 'Contract organization') => ({ id: `org_${randomText(22, ALPHABET)}`, name, slug: run.slug(), createdAt: now() }),
    member: (userId, role, extra = {}): OrganizationMember => ({ userId, role, teams: {}, joinedAt: now(), ...extra }),
    team: (name = 'Contract team'): Team => ({ id: `team_${randomText(22, ALPHABET)}`, name, createdAt: now() }),
    userId: () => `contract-user-${randomText(16, ALPHABET)}`,
    slug: () => `t-${randomText(16, SLUG_ALPHABET)}`,
    async create(organization: Organization, creator: OrganizationMember) {
      const answer = await adapter.createOrganization(organization, creator)
      if (answer === 'created') createdIds.push(organization.id)
      return answer
    },
    async created(role = 'owner') {
      const organization = run.organization()
      const creator = run.member(run.userId(), role)
      const answer = await run.create(organization, creator)
      run.expect(answer === 'created', `createOrganization with a free slug answered ${JSON.stringify(answer)}`)
      return { organization, creator }
    },
    expect: expectRule,
  }
  await checkRules('Organizations adapter', RULES, run, () => Promise.allSettled(createdIds.map(id => adapter.deleteOrganization(id))))
}
