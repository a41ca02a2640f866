/** The rules `verifyOrganizationsAdapter` checks, in order (organizations-contract.ts has their tools). */
import type { OrganizationMember } from '../runtime/organizations/organization-types'
import { sameMember, sameMembers, sameOrganization, sameTeams, sameUserOrganizations, shown, type ContractRule, type ContractRun } from './organizations-contract'

const CONCURRENT_CREATIONS = 50

/** Fails unless `userId`'s organizations are exactly `expected` (any order). */
async function expectUserOrganizations(run: ContractRun, userId: string, expected: Parameters<typeof sameUserOrganizations>[1], when: string): Promise<void> {
  const listed = await run.adapter.listUserOrganizations(userId)
  run.expect(sameUserOrganizations(listed, expected), `${when}, listUserOrganizations(${shown(userId)}) answered ${shown(listed)}, expected ${shown(expected)}`)
}

/** An organization with its creator and two more members (roles admin and member). */
async function organizationWithMembers(run: ContractRun) {
  const { organization, creator } = await run.created()
  const admin = run.member(run.userId(), 'admin', { email: 'admin@example.test', name: 'Admin' })
  const member = run.member(run.userId(), 'member')
  await run.adapter.saveMember(organization.id, admin)
  await run.adapter.saveMember(organization.id, member)
  return { organization, members: [creator, admin, member] as OrganizationMember[] }
}

export const RULES: ContractRule[] = [
  {
    name: 'unknown ids read as null or empty, and removing unknown things does nothing',
    async check(run) {
      const { adapter } = run
      const orgId = run.organization().id
      const userId = run.userId()
      run.expect(await adapter.getOrganization(orgId) === null, 'getOrganization of an unknown id did not answer null')
      run.expect(await adapter.updateOrganization(orgId, { name: 'Renamed' }) === null, 'updateOrganization of an unknown id did not answer null')
      run.expect(await adapter.getMember(orgId, userId) === null, 'getMember in an unknown organization did not answer null')
      run.expect((await adapter.listMembers(orgId)).length === 0, 'listMembers of an unknown organization is not empty')
      run.expect((await adapter.listTeams(orgId)).length === 0, 'listTeams of an unknown organization is not empty')
      run.expect((await adapter.listUserOrganizations(userId)).length === 0, 'listUserOrganizations of an unknown user is not empty')
      await adapter.deleteOrganization(orgId)
      await adapter.removeMember(orgId, userId)
      await adapter.deleteTeam(orgId, run.team().id)
    },
  },
  {
    name: 'createOrganization stores the organization with its creator as a member',
    async check(run) {
      const { organization, creator } = await run.created()
      const stored = await run.adapter.getOrganization(organization.id)
      run.expect(sameOrganization(stored, organization), `getOrganization answered ${shown(stored)}, expected ${shown(organization)}`)
      const member = await run.adapter.getMember(organization.id, creator.userId)
      run.expect(sameMember(member, creator), `getMember of the creator answered ${shown(member)}, expected ${shown(creator)}`)
      const members = await run.adapter.listMembers(organization.id)
      run.expect(sameMembers(members, [creator]), `listMembers answered ${shown(members)}, expected only the creator ${shown(creator)}`)
      run.expect(await run.adapter.getMember(organization.id, run.userId()) === null, 'getMember of a user who is not a member did not answer null')
      await expectUserOrganizations(run, creator.userId, [{ organization, role: creator.role }], 'after createOrganization')
    },
  },
  {
    name: 'a slug is unique: createOrganization with a taken slug answers \'slug_taken\' and stores nothing',
    async check(run) {
      const { organization } = await run.created()
      const other = { ...run.organization('Copycat'), slug: organization.slug }
      const creator = run.member(run.userId(), 'owner')
      const answer = await run.create(other, creator)
      run.expect(answer === 'slug_taken', `createOrganization with the slug of another organization answered ${shown(answer)}`)
      run.expect(await run.adapter.getOrganization(other.id) === null, 'the organization refused for its slug can be read')
      run.expect(await run.adapter.getMember(other.id, creator.userId) === null, 'the creator of the organization refused for its slug is a member of it')
      await expectUserOrganizations(run, creator.userId, [], 'after a creation refused for its slug')
    },
  },
  {
    name: `of ${CONCURRENT_CREATIONS} concurrent createOrganization calls with one slug, exactly one is 'created'`,
    async check(run) {
      const slug = run.slug()
      const attempts = Array.from({ length: CONCURRENT_CREATIONS }, (_, i) => ({ organization: { ...run.organization(`Race ${i}`), slug }, creator: run.member(run.userId(), 'owner') }))
      const answers = await Promise.all(attempts.map(a => run.create(a.organization, a.creator)))
      const winners = attempts.filter((_, i) => answers[i] === 'created')
      run.expect(winners.length === 1, `${winners.length} of the ${CONCURRENT_CREATIONS} calls answered 'created'`)
      run.expect(answers.every(a => a === 'created' || a === 'slug_taken'), `unexpected answers: ${shown(answers.filter(a => a !== 'created' && a !== 'slug_taken'))}`)
      const readable = (await Promise.all(attempts.map(a => run.adapter.getOrganization(a.organization.id)))).filter(Boolean)
      run.expect(readable.length === 1, `${readable.length} of the racing organizations can be read, expected the winner only`)
    },
  },
  {
    name: 'updateOrganization renames, and every member\'s list shows the new name',
    async check(run) {
      const { organization, members } = await organizationWithMembers(run)
      const renamed = { ...organization, name: 'Renamed organization' }
      const answer = await run.adapter.updateOrganization(organization.id, { name: renamed.name })
      run.expect(typeof answer === 'object' && sameOrganization(answer, renamed), `updateOrganization({ name }) answered ${shown(answer)}, expected ${shown(renamed)}`)
      const stored = await run.adapter.getOrganization(organization.id)
      run.expect(sameOrganization(stored, renamed), `after a rename getOrganization answered ${shown(stored)}, expected ${shown(renamed)}`)
      for (const m of members) await expectUserOrganizations(run, m.userId, [{ organization: renamed, role: m.role }], 'after a rename')
    },
  },
  {
    name: 'a slug change takes the new slug, frees the old one and shows in every member\'s list',
    async check(run) {
      const { organization, members } = await organizationWithMembers(run)
      const moved = { ...organization, slug: run.slug() }
      const answer = await run.adapter.updateOrganization(organization.id, { slug: moved.slug })
      run.expect(typeof answer === 'object' && sameOrganization(answer, moved), `updateOrganization({ slug }) answered ${shown(answer)}, expected ${shown(moved)}`)
      for (const m of members) await expectUserOrganizations(run, m.userId, [{ organization: moved, role: m.role }], 'after a slug change')
      const same = await run.adapter.updateOrganization(organization.id, { slug: moved.slug })
      run.expect(typeof same === 'object' && sameOrganization(same, moved), `updateOrganization to the slug it has answered ${shown(same)}`)
      const oldSlug = await run.create({ ...run.organization(), slug: organization.slug }, run.member(run.userId(), 'owner'))
      run.expect(oldSlug === 'created', `the old slug is not free after a slug change: createOrganization with it answered ${shown(oldSlug)}`)
      const newSlug = await run.create({ ...run.organization(), slug: moved.slug }, run.member(run.userId(), 'owner'))
      run.expect(newSlug === 'slug_taken', `the new slug is not taken after a slug change: createOrganization with it answered ${shown(newSlug)}`)
      const { organization: other } = await run.created()
      const taken = await run.adapter.updateOrganization(organization.id, { slug: other.slug })
      run.expect(taken === 'slug_taken', `updateOrganization to another organization's slug answered ${shown(taken)}`)
      const after = await run.adapter.getOrganization(organization.id)
      run.expect(sameOrganization(after, moved), `a refused slug change changed the organization: ${shown(after)}`)
    },
  },
  {
    name: 'saveMember adds and replaces a member, removeMember removes one, and the user\'s list follows',
    async check(run) {
      const { organization, creator } = await run.created()
      const { adapter } = run
      const team = run.team()
      await adapter.createTeam(organization.id, team)
      const added = run.member(run.userId(), 'admin', { email: 'new@example.test', name: 'New Member', teams: { [team.id]: 'lead' } })
      await adapter.saveMember(organization.id, added)
      const read = await adapter.getMember(organization.id, added.userId)
      run.expect(sameMember(read, added), `after saveMember getMember answered ${shown(read)}, expected ${shown(added)}`)
      await expectUserOrganizations(run, added.userId, [{ organization, role: 'admin' }], 'after saveMember')
      const replaced = { ...added, role: 'member', teams: {} }
      await adapter.saveMember(organization.id, replaced)
      const reread = await adapter.getMember(organization.id, added.userId)
      run.expect(sameMember(reread, replaced), `after saveMember of a new role getMember answered ${shown(reread)}, expected ${shown(replaced)}`)
      const members = await adapter.listMembers(organization.id)
      run.expect(sameMembers(members, [creator, replaced]), `after replacing a member listMembers answered ${shown(members)}, expected ${shown([creator, replaced])}`)
      await expectUserOrganizations(run, added.userId, [{ organization, role: 'member' }], 'after a role change')
      await adapter.removeMember(organization.id, added.userId)
      run.expect(await adapter.getMember(organization.id, added.userId) === null, 'after removeMember getMember did not answer null')
      const left = await adapter.listMembers(organization.id)
      run.expect(sameMembers(left, [creator]), `after removeMember listMembers answered ${shown(left)}, expected only the creator`)
      await expectUserOrganizations(run, added.userId, [], 'after removeMember')
      await adapter.removeMember(organization.id, added.userId)
    },
  },
  {
    name: 'listUserOrganizations lists every organization of a user with the user\'s role in each',
    async check(run) {
      const userId = run.userId()
      const expected = []
      for (const role of ['owner', 'admin', 'member']) {
        const { organization } = await run.created()
        await run.adapter.saveMember(organization.id, run.member(userId, role))
        expected.push({ organization, role })
      }
      await expectUserOrganizations(run, userId, expected, 'for a member of three organizations')
    },
  },
  {
    name: 'teams are created, listed and deleted',
    async check(run) {
      const { organization } = await run.created()
      const [first, second] = [run.team('First'), run.team('Second')]
      await run.adapter.createTeam(organization.id, first)
      await run.adapter.createTeam(organization.id, second)
      const both = await run.adapter.listTeams(organization.id)
      run.expect(sameTeams(both, [first, second]), `listTeams answered ${shown(both)}, expected ${shown([first, second])}`)
      await run.adapter.deleteTeam(organization.id, first.id)
      await run.adapter.deleteTeam(organization.id, first.id)
      await run.adapter.deleteTeam(organization.id, run.team().id)
      const one = await run.adapter.listTeams(organization.id)
      run.expect(sameTeams(one, [second]), `after deleteTeam listTeams answered ${shown(one)}, expected ${shown([second])}`)
    },
  },
  {
    name: 'organizations are isolated: members and teams of one are never another\'s',
    async check(run) {
      const { adapter } = run
      const [a, b] = [await run.created(), await run.created()]
      const team = run.team()
      await adapter.createTeam(a.organization.id, team)
      const onlyA = run.member(run.userId(), 'admin')
      await adapter.saveMember(a.organization.id, onlyA)
      run.expect(await adapter.getMember(b.organization.id, onlyA.userId) === null, 'a member of one organization is a member of another')
      run.expect(await adapter.getMember(b.organization.id, a.creator.userId) === null, 'the creator of one organization is a member of another')
      const bMembers = await adapter.listMembers(b.organization.id)
      run.expect(sameMembers(bMembers, [b.creator]), `listMembers of one organization shows another's members: ${shown(bMembers)}`)
      run.expect((await adapter.listTeams(b.organization.id)).length === 0, 'listTeams of one organization shows another\'s team')
      await adapter.deleteTeam(b.organization.id, team.id)
      run.expect(sameTeams(await adapter.listTeams(a.organization.id), [team]), 'deleteTeam in one organization deleted another\'s team')
      await adapter.removeMember(b.organization.id, onlyA.userId)
      run.expect(sameMember(await adapter.getMember(a.organization.id, onlyA.userId), onlyA), 'removeMember in one organization removed the member of another')
      const inB = run.member(onlyA.userId, 'member')
      await adapter.saveMember(b.organization.id, inB)
      run.expect(sameMember(await adapter.getMember(a.organization.id, onlyA.userId), onlyA), 'saveMember in one organization changed the member of another')
      await expectUserOrganizations(run, onlyA.userId, [{ organization: a.organization, role: 'admin' }, { organization: b.organization, role: 'member' }], 'for a member of two organizations')
    },
  },
  {
    name: 'deleteOrganization removes the organization, its members, its teams and its slug, and leaves the others',
    async check(run) {
      const { adapter } = run
      const { organization, members } = await organizationWithMembers(run)
      await adapter.createTeam(organization.id, run.team())
      const other = await run.created()
      const shared = members[1]!
      const sharedInOther = run.member(shared.userId, 'member')
      await adapter.saveMember(other.organization.id, sharedInOther)
      await adapter.deleteOrganization(organization.id)
      run.expect(await adapter.getOrganization(organization.id) === null, 'a deleted organization can be read')
      run.expect((await adapter.listMembers(organization.id)).length === 0, 'listMembers of a deleted organization is not empty')
      run.expect((await adapter.listTeams(organization.id)).length === 0, 'listTeams of a deleted organization is not empty')
      for (const m of members) {
        run.expect(await adapter.getMember(organization.id, m.userId) === null, 'getMember in a deleted organization did not answer null')
        const expected = m === shared ? [{ organization: other.organization, role: 'member' }] : []
        await expectUserOrganizations(run, m.userId, expected, 'after deleteOrganization')
      }
      const reuse = await run.create({ ...run.organization(), slug: organization.slug }, run.member(run.userId(), 'owner'))
      run.expect(reuse === 'created', `the slug of a deleted organization is not free: createOrganization with it answered ${shown(reuse)}`)
      run.expect(sameOrganization(await adapter.getOrganization(other.organization.id), other.organization), 'deleteOrganization changed another organization')
      const others = await adapter.listMembers(other.organization.id)
      run.expect(sameMembers(others, [other.creator, sharedInOther]), `deleteOrganization changed the members of another organization: ${shown(others)}`)
    },
  },
]
