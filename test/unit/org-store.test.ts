import { afterAll, describe, expect, it } from 'vitest'
import { createStoreOrganizations } from '../../src/runtime/organizations/server/org-store'
import { ORG_RECORDS } from '../../src/runtime/organizations/server/org-records'
import type { Organization, OrganizationMember } from '../../src/runtime/organizations/organization-types'
import type { StoreBackend } from '../../src/runtime/server/lib/store'
import type { RecordStore } from '../../src/runtime/server/lib/store/record-store'
import { randomToken } from '../../src/runtime/server/lib/store/crypto'
import { verifyOrganizationsAdapter } from '../../src/testing'
import { organizationsWithBug, type AdapterBug } from './helpers/organizations-with-bugs'
import { openBackend, recordStoreOn, storePlace, STORE_DRIVERS, STORE_SECRETS, type StoreDriver, type StorePlace } from './helpers/record-stores'

const places: StorePlace[] = []
const backends: StoreBackend[] = []
afterAll(async () => {
  await Promise.all(backends.splice(0).map(b => b.dispose()))
  await Promise.all(places.splice(0).map(p => p.cleanup()))
})

/** A record store on a new place of `driver`, its backend and place. */
async function freshStore(driver: StoreDriver, secrets?: readonly string[]) {
  const place = await storePlace(driver)
  places.push(place)
  const backend = await openBackend(place)
  backends.push(backend)
  return { place, backend, store: recordStoreOn(backend, place, secrets) }
}

const when = '2026-01-02T03:04:05.000Z'
const organization = (slug = `s-${randomToken(6).toLowerCase().replace(/[^a-z\d]/g, 'x')}`, name = 'Acme'): Organization => ({ id: `org_${randomToken(16)}`, name, slug, createdAt: when })
const member = (userId: string, role = 'owner', extra: Partial<OrganizationMember> = {}): OrganizationMember => ({ userId, role, teams: {}, joinedAt: when, ...extra })

describe.each(STORE_DRIVERS)('the store adapter on the %s driver', (driver) => {
  it('keeps the adapter contract (verifyOrganizationsAdapter), and leaves nothing behind once its organizations are deleted', async () => {
    const { backend, place, store } = await freshStore(driver)
    await verifyOrganizationsAdapter(() => createStoreOrganizations(store))
    // Every organization of the run was deleted: no record, slug, map entry or user list is left.
    expect(await backend.keys(place.prefix)).toEqual([])
  }, 60_000)

  it('lists a user\'s organizations with one map read, whatever their number', async () => {
    const { store } = await freshStore(driver)
    const adapter = createStoreOrganizations(store)
    const orgs = Array.from({ length: 40 }, () => organization())
    for (const org of orgs) expect(await adapter.createOrganization(org, member('user-many', 'admin'))).toBe('created')
    const calls: string[] = []
    const counted = new Proxy(store, {
      get: (target, name: keyof RecordStore) => {
        const value = target[name]
        return typeof value === 'function' ? (...args: unknown[]) => (calls.push(name), (value as (...a: unknown[]) => unknown).apply(target, args)) : value
      },
    })
    const listed = await createStoreOrganizations(counted).listUserOrganizations('user-many')
    expect(listed.map(u => u.organization.id).sort()).toEqual(orgs.map(o => o.id).sort())
    expect(listed.every(u => u.role === 'admin')).toBe(true)
    expect(calls.filter(name => !['key', 'hash', 'hashes'].includes(name))).toEqual(['mapEntries'])
  }, 30_000)
})

describe('the store adapter', () => {
  it('reads a broken record as absent', async () => {
    const { backend, store } = await freshStore('memory')
    const adapter = createStoreOrganizations(store)
    const org = organization()
    await adapter.createOrganization(org, member('user-1'))
    await adapter.saveMember(org.id, member('user-2', 'member'))
    await backend.set(store.key(ORG_RECORDS.organization, org.id).current, 'not a sealed record', 60_000)
    expect(await adapter.getOrganization(org.id)).toBeNull()
    const membersMap = store.key(ORG_RECORDS.orgMembers, org.id).current
    await backend.mapSet(membersMap, store.hash('org-member', 'user-2'), 'not a sealed record', 60_000)
    expect((await adapter.listMembers(org.id)).map(m => m.userId)).toEqual(['user-1'])
    await backend.set(store.key(ORG_RECORDS.orgMembership, `${org.id}\0user-2`).current, 'not a sealed record', 60_000)
    expect(await adapter.getMember(org.id, 'user-2')).toBeNull()
  })

  it('takes a repeated creation (a retry after a lost answer) as done, never deleting the organization', async () => {
    const { store } = await freshStore('memory')
    const adapter = createStoreOrganizations(store)
    const org = organization()
    expect(await adapter.createOrganization(org, member('user-1'))).toBe('created')
    expect(await adapter.createOrganization(org, member('user-1'))).toBe('created')
    expect(await adapter.getOrganization(org.id)).toEqual(org)
    expect(await adapter.listMembers(org.id)).toEqual([member('user-1')])
    expect(await adapter.createOrganization({ ...organization(), slug: org.slug }, member('user-2'))).toBe('slug_taken')
  })

  it('answers malformed ids as unknown, without throwing', async () => {
    const { store } = await freshStore('memory')
    const adapter = createStoreOrganizations(store)
    const org = organization()
    await adapter.createOrganization(org, member('user-1'))
    for (const bad of ['', 'org_short', '../org', 'org_0123456789012345678901:x', 'team_0123456789012345678901']) {
      expect(await adapter.getOrganization(bad)).toBeNull()
      expect(await adapter.getMember(bad, 'user-1')).toBeNull()
      expect(await adapter.listMembers(bad)).toEqual([])
      expect(await adapter.listTeams(bad)).toEqual([])
      expect(await adapter.updateOrganization(bad, { name: 'x' })).toBeNull()
      await adapter.removeMember(bad, 'user-1')
      await adapter.deleteOrganization(bad)
      await adapter.deleteTeam(org.id, bad)
      await adapter.saveMember(bad, member('user-9'))
    }
    expect(await adapter.listUserOrganizations('user-1')).toEqual([{ organization: org, role: 'owner' }])
    expect(await adapter.listUserOrganizations('user-9')).toEqual([])
  })

  it('refuses to store what would read back as absent', async () => {
    const { store } = await freshStore('memory')
    const adapter = createStoreOrganizations(store)
    await expect(adapter.createOrganization({ ...organization(), slug: 'Not A Slug' }, member('u'))).rejects.toThrow(/invalid organization \(slug/)
    await expect(adapter.createOrganization(organization(), { ...member('u'), role: '' })).rejects.toThrow(/invalid member \(role/)
    const org = organization()
    await adapter.createOrganization(org, member('u'))
    await expect(adapter.updateOrganization(org.id, { name: '' })).rejects.toThrow(/invalid organization \(name/)
    expect(await adapter.getOrganization(org.id)).toEqual(org)
  })

  it('finds members and lists written before a storage-key rotation, and leaves one entry per member after a change', async () => {
    const { backend, place, store: before } = await freshStore('memory', [STORE_SECRETS[1]])
    const after = recordStoreOn(backend, place, [STORE_SECRETS[0], STORE_SECRETS[1]])
    const old = createStoreOrganizations(before)
    const org = organization()
    await old.createOrganization(org, member('owner-1'))
    await old.saveMember(org.id, member('user-2', 'member', { email: 'two@example.test' }))
    const adapter = createStoreOrganizations(after)
    expect(await adapter.getOrganization(org.id)).toEqual(org)
    expect(await adapter.getMember(org.id, 'user-2')).toEqual(member('user-2', 'member', { email: 'two@example.test' }))
    expect(await adapter.listUserOrganizations('user-2')).toEqual([{ organization: org, role: 'member' }])
    await adapter.saveMember(org.id, member('user-2', 'admin'))
    expect((await adapter.listMembers(org.id)).map(m => `${m.userId} ${m.role}`).sort()).toEqual(['owner-1 owner', 'user-2 admin'])
    expect(await adapter.listUserOrganizations('user-2')).toEqual([{ organization: org, role: 'admin' }])
    // The old entry is gone, not merely hidden by the new one.
    expect(await old.getMember(org.id, 'user-2')).toBeNull()
    await adapter.removeMember(org.id, 'owner-1')
    expect(await adapter.getMember(org.id, 'owner-1')).toBeNull()
    expect(await adapter.listUserOrganizations('owner-1')).toEqual([])
  })
})

describe('verifyOrganizationsAdapter', () => {
  it('passes a plain correct adapter', async () => {
    await verifyOrganizationsAdapter(() => organizationsWithBug())
  })

  const broken: Array<[AdapterBug, RegExp]> = [
    ['slug-not-unique', /breaks the rule "a slug is unique: .*": createOrganization with the slug of another organization answered "created"/],
    ['slug-check-then-set', /breaks the rule "of 50 concurrent createOrganization calls with one slug, exactly one is 'created'": 50 of the 50 calls answered 'created'/],
    ['old-slug-kept', /breaks the rule "a slug change takes the new slug, frees the old one .*": the old slug is not free after a slug change/],
    ['delete-keeps-user-lists', /breaks the rule "deleteOrganization removes .*": after deleteOrganization, listUserOrganizations\(.*\) answered \[\{"organization"/],
    ['rename-not-in-user-lists', /breaks the rule "updateOrganization renames, and every member's list shows the new name": after a rename, listUserOrganizations/],
    ['role-not-in-user-lists', /breaks the rule "saveMember adds and replaces a member, .*": after a role change, listUserOrganizations/],
    ['teams-not-isolated', /breaks the rule "teams are created, listed and deleted": listTeams answered \[.*\], expected \[/],
    ['member-found-anywhere', /breaks the rule "organizations are isolated: .*": a member of one organization is a member of another/],
  ]
  it.each(broken)('fails an adapter with the bug %s, naming the rule it breaks', async (bug, message) => {
    const error = await verifyOrganizationsAdapter(() => organizationsWithBug(bug)).then(() => null, (e: unknown) => e)
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toMatch(message)
  })

  it('names the rule when the adapter throws', async () => {
    const adapter = { ...organizationsWithBug(), listTeams: async () => {
      throw new Error('connection lost')
    } }
    await expect(verifyOrganizationsAdapter(() => adapter)).rejects.toThrow(/breaks the rule "unknown ids read as null or empty, .*": the adapter threw: connection lost/)
  })

  it('accepts an adapter made asynchronously, and deletes the organizations it created', async () => {
    const adapter = organizationsWithBug()
    const created: string[] = []
    const deleted: string[] = []
    await verifyOrganizationsAdapter(async () => ({
      ...adapter,
      createOrganization: async (org, creator) => {
        const answer = await adapter.createOrganization(org, creator)
        if (answer === 'created') created.push(org.id)
        return answer
      },
      deleteOrganization: async (orgId) => {
        deleted.push(orgId)
        await adapter.deleteOrganization(orgId)
      },
    }))
    expect(created.length).toBeGreaterThan(10)
    for (const id of created) expect(deleted).toContain(id)
  })
})
