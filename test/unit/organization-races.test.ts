import { afterAll, describe, expect, it } from 'vitest'
import type { AuthClaims } from '../../src/runtime/types/auth'
import type { AuthContext } from '../../src/runtime/server/lib/core/context'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { acceptInvitation, createInvitation } from '../../src/runtime/organizations/server/invitation-flow'
import { changeMemberRole, createOrganization, organizationsAdapter, removeMember } from '../../src/runtime/organizations/server/organization-service'
import { deleteRedisKeys } from '../support/redis-servers'
import { issueRefreshToken } from '../../src/runtime/server/lib/core/records/refresh-token'
import { unitContext } from './helpers/context'
import { fakeEvent } from './helpers/event'
import { storePlace, type StorePlace } from './helpers/record-stores'

// The rules that read, then write (the last owner, single-use invitations) under 50 concurrent calls of
// the service itself, on stores whose operations really interleave: no tokens that go stale mask a race.
const places: StorePlace[] = []
afterAll(async () => {
  resetAuthHandlers()
  await Promise.all(places.map(place => place.cleanup()))
  await Promise.all(places.filter(p => p.driver === 'redis').map(p => deleteRedisKeys(p.prefix)))
})

const links: string[] = []
defineAuthHandlers({ organizations: { sendInvitation: ({ link }) => void links.push(link) } })

async function contextOn(driver: 'memory' | 'fs' | 'redis'): Promise<AuthContext> {
  const place = await storePlace(driver)
  places.push(place)
  return unitContext({ organizations: {}, tokenRefresh: { storage: { driver, base: place.base, url: place.url, prefix: place.prefix } } })
}

const claims = (sub: string): AuthClaims => ({ sub, email: `${sub}@example.com` } as AuthClaims)
const statusOf = (error: unknown) => (error as { statusCode?: number }).statusCode ?? 500

describe.each(['memory', 'fs', 'redis'] as const)('organization rules under races (%s)', (driver) => {
  it('50 concurrent demotions and removals of three owners by each other leave at least one owner', async () => {
    const ctx = await contextOn(driver)
    const adapter = organizationsAdapter(ctx)
    const owners = ['o1', 'o2', 'o3'].map(claims)
    const { organization } = await createOrganization(ctx, fakeEvent(), owners[0]!, { name: 'Race' })
    for (const owner of owners.slice(1)) await adapter.saveMember(organization.id, { userId: owner.sub, role: 'owner', teams: {}, joinedAt: new Date().toISOString() })
    const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => {
      const actor = owners[i % 3]!
      const target = owners[(i + 1) % 3]!.sub
      return i % 2 ? removeMember(ctx, fakeEvent(), actor, organization.id, target) : changeMemberRole(ctx, fakeEvent(), actor, organization.id, target, 'member')
    }))
    const refused = results.flatMap(result => (result.status === 'rejected' ? [statusOf(result.reason)] : []))
    expect(refused.every(status => status === 403 || status === 404 || status === 409)).toBe(true)
    const left = (await adapter.listMembers(organization.id)).filter(member => member.role === 'owner')
    expect(left.length).toBeGreaterThanOrEqual(1)
  })

  it('50 concurrent accepts of one invitation make one membership', async () => {
    const ctx = await contextOn(driver)
    const owner = claims('owner')
    const { organization } = await createOrganization(ctx, fakeEvent(), owner, { name: 'Invites' })
    await createInvitation(ctx, fakeEvent(), owner, organization.id, { email: 'joiner@example.com', role: 'member' })
    const token = new URL(links.at(-1)!, 'http://localhost').searchParams.get('token')!
    // A password session of the invited address: the accept reads the verified email from it.
    const session = await issueRefreshToken(ctx, { user: { sub: 'joiner', email: 'joiner@example.com', emailVerified: true }, userId: 'joiner', claims: {}, provider: 'password' })
    const joiner = { ...claims('joiner'), sid: session.record.family } as AuthClaims
    const request = () => fakeEvent({ method: 'POST', headers: { cookie: `${ctx.options.tokenRefresh.cookie.cookieName}=${session.token}` } })
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => acceptInvitation(ctx, request(), joiner, { token })))
    expect(results.filter(result => result.status === 'fulfilled')).toHaveLength(1)
    expect(results.flatMap(result => (result.status === 'rejected' ? [statusOf(result.reason)] : [])).every(status => status === 400 || status === 409)).toBe(true)
    const members = await organizationsAdapter(ctx).listMembers(organization.id)
    expect(members.filter(member => member.userId === 'joiner')).toHaveLength(1)
  })
})
