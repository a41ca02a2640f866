import { describe, expect, it, vi } from 'vitest'
import { errorOf, json, organizationsApp, type OrgUser } from './helpers/organizations-app'
import { peekAuthContext } from '../../src/runtime/server/utils/auth-context'
import { withLease } from '../../src/runtime/server/lib/edge/lease'
import { ORG_RECORDS } from '../../src/runtime/organizations/server/org-records'
import { createAuthorizationCode } from '../../src/runtime/server/utils/authorization-code'
import { fakeEvent } from './helpers/event'
import { permitted } from '../../src/runtime/organizations/server/permission-check'

// Findings of a review of organizations, each as the behaviour the rules and docs promise: the real routes on a
// plain h3 app on a loopback port (the set-up of the organizations suite, helpers/organizations-app.ts).
vi.mock('nitropack/runtime', () => import('./helpers/nitro-stub'))

const app = organizationsApp('memory')
const { browser, logIn, unique, call, createOrg, invite, join, roleOf } = app

const status = async (pending: Promise<Response>) => (await pending).status
const sleep = (ms: number) => new Promise<void>(resolve => setTimeout(resolve, ms))

async function createTeam(owner: OrgUser, orgId: string, name = 'Platform'): Promise<string> {
  return (await json<{ team: { id: string } }>(await call(owner, 'POST', `orgs/${orgId}/teams`, { name }), 201)).team.id
}

describe('organizations under attack', () => {
  it('an outsider neither waits on nor holds an organization\'s lease: PATCH and DELETE of a member answer 404 at once', async () => {
    const owner = await logIn(unique('owner'))
    const orgId = await createOrg(owner)
    const outsider = await logIn(unique('outsider'))
    const ctx = peekAuthContext()!
    // Someone (a long change, or a stream of requests) holds the organization's lease.
    let release: (() => void) | undefined
    const held = withLease(ctx.store, ctx.store.key(ORG_RECORDS.orgLock, orgId), () => new Promise<void>((resolve) => {
      release = resolve
    }))
    await vi.waitFor(() => expect(release).toBeDefined())
    const remove = status(call(outsider, 'DELETE', `orgs/${orgId}/members/${owner.sub}`))
    const demote = status(call(outsider, 'PATCH', `orgs/${orgId}/members/${owner.sub}`, { role: 'member' }))
    const still = 'no answer within 1 s'
    const early = await Promise.all([remove, demote].map(answer => Promise.race([answer, sleep(1000).then(() => still)])))
    release!()
    await held
    const late = await Promise.all([remove, demote])
    // Today both wait for the lease (a non-member takes part in the organization's lock), then answer 404.
    expect(late).toEqual([404, 404])
    expect(early).toEqual([404, 404])
  })

  it('a demotion whose stale mark failed: once the new role is stored (also after a retry), the old token is refused', async () => {
    const owner = await logIn(unique('owner'))
    const orgId = await createOrg(owner)
    const admin = await join(owner, orgId, 'admin')
    admin.token = (await json<{ accessToken: string }>(await call(admin, 'POST', 'orgs/active', { orgId }))).accessToken
    const ctx = peekAuthContext()!
    expect((await ctx.tokens.verify(admin.token))?.orgRole).toBe('admin')
    // The revocation list's write fails once (a store blip, or the process dies right there).
    vi.spyOn(ctx.revocations!, 'markStale').mockRejectedValueOnce(new Error('store unavailable'))
    const first = await call(owner, 'PATCH', `orgs/${orgId}/members/${admin.sub}`, { role: 'member' })
    expect(first.status).toBe(500)
    // The client retries: the role is already 'member', so nothing is marked.
    await json(await call(owner, 'PATCH', `orgs/${orgId}/members/${admin.sub}`, { role: 'member' }))
    vi.restoreAllMocks()
    expect(await roleOf(owner, orgId, admin.sub)).toBe('member')
    // The demoted admin's token still says orgRole 'admin' and is accepted.
    const stillAccepted = (await call(admin, 'GET', 'orgs')).status
    expect(stillAccepted).toBe(401)
  })

  it('a removal that failed half-way leaves no ghost owner: the last real owner still cannot leave', async () => {
    const alice = await logIn(unique('alice'))
    const orgId = await createOrg(alice)
    const bob = await join(alice, orgId, 'owner')
    const ctx = peekAuthContext()!
    const members = ctx.store.key(ORG_RECORDS.orgMembers, orgId).current
    const mapDelete = ctx.store.mapDelete.bind(ctx.store)
    // The members map's deletion fails (store blip / crash) after the membership record was removed.
    const spy = vi.spyOn(ctx.store, 'mapDelete').mockImplementation(async (key, field) => {
      if (key.current === members) throw new Error('store unavailable')
      return mapDelete(key, field)
    })
    expect((await call(alice, 'DELETE', `orgs/${orgId}/members/${bob.sub}`)).status).toBe(500)
    spy.mockRestore()
    // A retry cannot finish it: Bob's membership record is gone.
    expect(await errorOf(await call(alice, 'DELETE', `orgs/${orgId}/members/${bob.sub}`), 404)).toBe('not_found')
    // Bob is out (his token was marked stale before the change; a fresh one finds no membership), yet still listed as an owner.
    expect(await errorOf(await call(bob, 'GET', `orgs/${orgId}`), 401)).toBe('session_stale')
    expect(await roleOf(alice, orgId, bob.sub)).toBe('owner')
    // Alice is the only real owner: leaving must be refused, or the organization has no owner left.
    const leave = await call(alice, 'DELETE', `orgs/${orgId}/members/${alice.sub}`)
    expect(leave.status).toBe(409)
  })

  it('a team role above the admin\'s own is not changed or removed by the admin (docs: "the same holds for team roles")', async () => {
    const owner = await logIn(unique('owner'))
    const orgId = await createOrg(owner)
    const admin = await join(owner, orgId, 'admin')
    const member = await join(owner, orgId, 'member')
    const teamId = await createTeam(owner, orgId)
    await json(await call(owner, 'PUT', `orgs/${orgId}/teams/${teamId}/members/${member.sub}`, { role: 'owner' }))
    const overwrite = await call(admin, 'PUT', `orgs/${orgId}/teams/${teamId}/members/${member.sub}`, { role: 'member' })
    const remove = await call(admin, 'DELETE', `orgs/${orgId}/teams/${teamId}/members/${member.sub}`)
    expect([overwrite.status, remove.status]).toEqual([403, 403])
  })

  it('the open invitations of a removed admin stop working (no role the inviter no longer holds, no way back in)', async () => {
    const owner = await logIn(unique('owner'))
    const orgId = await createOrg(owner)
    const admin = await join(owner, orgId, 'admin')
    const accomplice = await logIn(unique('accomplice'))
    const token = await invite(admin, orgId, accomplice.email, 'admin')
    await json(await call(owner, 'DELETE', `orgs/${orgId}/members/${admin.sub}`))
    const accepted = await call(accomplice, 'POST', 'invitations/accept', { token })
    expect(accepted.status).not.toBe(200)
  })

  it('an owner can remove a member whose role was dropped from the role table (a redeploy)', async () => {
    const owner = await logIn(unique('owner'))
    const orgId = await createOrg(owner)
    const writer = await join(owner, orgId, 'writer')
    const roles = peekAuthContext()!.options.organizations!.roles as Record<string, string[]>
    const kept = roles.writer!
    delete roles.writer
    try {
      const removed = await call(owner, 'DELETE', `orgs/${orgId}/members/${writer.sub}`)
      expect(removed.status, JSON.stringify(await removed.clone().json())).toBe(200)
    }
    finally {
      roles.writer = kept
    }
  })
})

describe('the verified email of a custom login', () => {
  it('a host\'s own login flow named \'password\' (createAuthorizationCode) proves no email', async () => {
    const owner = await logIn(unique('owner'))
    const orgId = await createOrg(owner)
    const victim = unique('victim')
    const token = await invite(owner, orgId, victim)
    // A host's own sign-in (LDAP, a legacy password table…) labelled 'password', for a user whose address nobody proved.
    const b = browser()
    const code = await createAuthorizationCode(fakeEvent({ method: 'POST', url: '/api/legacy-login' }), { sub: 'legacy-7', email: victim }, { provider: 'password', bindToBrowser: false })
    const { accessToken } = await json<{ accessToken: string }>(await b.send('POST', app.options.endpoints.tokenPath, { body: { code } }))
    const accepted = await b.send('POST', '/auth/invitations/accept', { body: { token }, bearer: accessToken })
    expect(await errorOf(accepted, 403)).toBe('invitation_email_mismatch')
  })
})

describe('team roles after a demotion', () => {
  it('an admin who put themselves in every team as admin keeps no admin permission once demoted to member', async () => {
    const owner = await logIn(unique('owner'))
    const orgId = await createOrg(owner)
    const admin = await join(owner, orgId, 'admin')
    const teamId = await createTeam(owner, orgId)
    // Before the demotion: the admin tries to give themselves the admin role in the team; nobody sets their own team role.
    expect(await errorOf(await call(admin, 'PUT', `orgs/${orgId}/teams/${teamId}/members/${admin.sub}`, { role: 'admin' }), 403)).toBe('own_role')
    await json(await call(owner, 'PATCH', `orgs/${orgId}/members/${admin.sub}`, { role: 'member' }))
    // The claims of the demoted member's next token, and a host check on a resource of that team.
    const claims = { sub: admin.sub, org: orgId, orgRole: 'member' }
    const allowed = await permitted(peekAuthContext()!, fakeEvent(), claims, 'member:delete', { resource: { id: 'doc-1', teamId }, organization: orgId })
    expect(allowed).toBe(false)
  })
})
