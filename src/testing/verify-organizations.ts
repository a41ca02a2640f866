import type { Organization, OrganizationMember, OrganizationsAdapter, Team } from '../runtime/organizations/organization-types'
import type { ContractRun } from './organizations-contract'
import { RULES } from './organizations-rules'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
const SLUG_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'

/** `length` random characters of `alphabet` (64 or fewer characters). */
function randomText(length: number, alphabet: string): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(length))
  let out = ''
  for (const byte of bytes) out += alphabet[byte % alphabet.length]
  return out
}

/** Now, to the second (a database that keeps seconds reads it back as written). */
const now = () => new Date(Math.floor(Date.now() / 1000) * 1000).toISOString()

/** A failed rule (its message names the rule). */
class BrokenRule extends Error {}

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
    expect(condition, detail) {
      if (!condition) throw new BrokenRule(detail)
    },
  }
  try {
    for (const rule of RULES) {
      try {
        await rule.check(run)
      }
      catch (error) {
        const detail = error instanceof BrokenRule ? error.message : `the adapter threw: ${error instanceof Error ? error.message : String(error)}`
        throw new Error(`Organizations adapter breaks the rule "${rule.name}": ${detail}`, { cause: error })
      }
    }
  }
  finally {
    // Best effort: a broken adapter may fail here too; the first error is what the caller sees.
    await Promise.allSettled(createdIds.map(id => adapter.deleteOrganization(id)))
  }
}
