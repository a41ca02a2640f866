import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { defineAuthHandlers } from '../../../src/runtime/server/lib/core/handlers'
import { errorOf, json, organizationsApp, PER_INVITER, PER_ORGANIZATION, type OrganizationsDriver, type OrgUser } from './organizations-app'
import { nitro } from './nitro-stub'

/**
 * Organizations through their real routes on a plain h3 app on a loopback port, with the store on
 * `driver`: the rules of the issue (isolation, no escalation, always an owner, invitations bound to a
 * verified email, limits) and the races on one store. One call per test file: the file mocks
 * `nitropack/runtime` with helpers/nitro-stub.ts (the routes' one auth context comes from its options).
 */
export function organizationsSuite(driver: OrganizationsDriver): void {
  const app = organizationsApp(driver)
  const { sent, browser, register, logIn, unique, refresh, call, createOrg, invite, join, roleOf, mintUsers } = app

  /** Invitations `inviter` sends to `orgId`, one after another, until one is refused (429): how many went out. Then two more, both refused. */
  async function inviteUntilRefused(inviter: OrgUser, orgId: string): Promise<number> {
    const ask = () => call(inviter, 'POST', `orgs/${orgId}/invitations`, { email: unique('flood'), role: 'member' })
    let sentCount = 0
    for (let res = await ask(); res.status !== 429; res = await ask()) {
      await json(res, 201)
      if (++sentCount > 100) throw new Error('no invitation limit')
    }
    for (let i = 0; i < 2; i++) expect(await errorOf(await ask(), 429)).toBe('rate_limited')
    return sentCount
  }

  /** 50 requests at once, so that the connections of a race that follows are open and its requests arrive together. */
  async function warmUp(): Promise<void> {
    await Promise.all(Array.from({ length: 50 }, async () => (await fetch(`${app.base}/auth/orgs`)).arrayBuffer()))
  }

  /** An error answer's code, after checking its status and its shape `{ statusCode, message, error }`. */
  async function errorAnswer(res: Response, status: number): Promise<string> {
    const body = await json<{ statusCode: number, message: string, error: string }>(res, status)
    expect(body).toEqual({ statusCode: status, message: expect.any(String), error: expect.any(String) })
    return body.error
  }

  describe(`organizations on ${driver}`, () => {
    it('creates an organization whose creator is its owner, and lists only the caller\'s', async () => {
      const alice = await logIn(unique('alice'))
      const bob = await logIn(unique('bob'))
      const created = await json<{ organization: { id: string, name: string, slug: string }, role: string }>(await call(alice, 'POST', 'orgs', { name: 'Ünïcode Labs' }), 201)
      expect(created.role).toBe('owner')
      expect(created.organization.slug).toBe('unicode-labs')
      expect((await json<{ organizations: Array<{ id: string, role: string }> }>(await call(alice, 'GET', 'orgs'))).organizations).toContainEqual(expect.objectContaining({ id: created.organization.id, role: 'owner' }))
      expect((await json<{ organizations: unknown[] }>(await call(bob, 'GET', 'orgs'))).organizations).toEqual([])
      expect(await json(await call(alice, 'GET', `orgs/${created.organization.id}`))).toEqual({ organization: created.organization, role: 'owner' })
      expect(nitro.hooks.some(([name, payload]) => name === 'svc:org:created' && (payload as { actor: { sub: string } }).actor.sub === alice.sub)).toBe(true)
    })

    it('answers 404 alike to outsiders, unknown ids and malformed ids on every path under an organization', async () => {
      const owner = await logIn(unique('owner'))
      const outsider = await logIn(unique('outsider'))
      const orgId = await createOrg(owner)
      const teamId = (await json<{ team: { id: string } }>(await call(owner, 'POST', `orgs/${orgId}/teams`, { name: 'Core' }), 201)).team.id
      const paths: Array<[string, string, unknown?]> = [
        ['GET', `orgs/${orgId}`], ['PATCH', `orgs/${orgId}`, { name: 'Mine' }], ['DELETE', `orgs/${orgId}`],
        ['GET', `orgs/${orgId}/members`], ['PATCH', `orgs/${orgId}/members/${owner.sub}`, { role: 'member' }], ['DELETE', `orgs/${orgId}/members/${owner.sub}`],
        ['POST', `orgs/${orgId}/invitations`, { email: 'x@example.com', role: 'member' }], ['GET', `orgs/${orgId}/invitations`],
        ['GET', `orgs/${orgId}/teams`], ['POST', `orgs/${orgId}/teams`, { name: 'Mine' }], ['DELETE', `orgs/${orgId}/teams/${teamId}`],
        ['PUT', `orgs/${orgId}/teams/${teamId}/members/${outsider.sub}`, { role: 'member' }],
      ]
      for (const [method, path, body] of paths) {
        const res = await call(outsider, method, path, body)
        expect(`${method} ${path} ${res.status} ${await res.text()}`).toMatch(/ 404 .*"error":"not_found"/)
      }
      for (const id of ['org_AAAAAAAAAAAAAAAAAAAAAA', 'nonsense', `${orgId}x`, 'org_%00', `${orgId.slice(0, -1)}%2F`]) {
        const res = await call(owner, 'GET', `orgs/${id}/members`)
        expect(`${id} ${res.status} ${await res.text()}`).toMatch(/ 404 .*"error":"not_found"/)
      }
      // Nothing changed.
      expect((await json<{ organization: { name: string } }>(await call(owner, 'GET', `orgs/${orgId}`))).organization.name).toBe('Acme')
    })

    it('refuses bad input with 400 and taken slugs with 409, never a 500', async () => {
      const owner = await logIn(unique('owner'))
      const orgId = await createOrg(owner)
      const { organization } = await json<{ organization: { slug: string } }>(await call(owner, 'GET', `orgs/${orgId}`))
      expect(await errorOf(await call(owner, 'POST', 'orgs', { name: 'Other', slug: organization.slug }), 409)).toBe('slug_taken')
      expect(await errorOf(await call(owner, 'POST', 'orgs', { name: 'x'.repeat(101) }), 400)).toBe('bad_request')
      expect(await errorOf(await call(owner, 'POST', 'orgs', { name: '   ' }), 400)).toBe('bad_request')
      expect(await errorOf(await call(owner, 'POST', 'orgs', { name: 'A', slug: 'Not A Slug' }), 400)).toBe('bad_request')
      expect(await errorOf(await call(owner, 'POST', 'orgs', { name: 42 }), 400)).toBe('bad_request')
      expect(await errorOf(await call(owner, 'POST', `orgs/${orgId}/invitations`, { email: 'a@example.com', role: 'emperor' }), 400)).toBe('unknown_role')
      expect(await errorOf(await call(owner, 'POST', `orgs/${orgId}/invitations`, { email: 'not an email', role: 'member' }), 400)).toBe('invalid_email')
      const res = await owner.b.send('POST', '/auth/orgs', { body: undefined, bearer: owner.token })
      expect(res.status).toBe(400)
    })

    it('lets nobody grant, invite to or change a role above their own, nor edit their own role', async () => {
      const owner = await logIn(unique('owner'))
      const orgId = await createOrg(owner)
      const admin = await join(owner, orgId, 'admin')
      const member = await join(owner, orgId, 'member')
      expect(await errorOf(await call(admin, 'PATCH', `orgs/${orgId}/members/${member.sub}`, { role: 'owner' }), 403)).toBe('role_not_grantable')
      expect(await errorOf(await call(admin, 'PATCH', `orgs/${orgId}/members/${owner.sub}`, { role: 'member' }), 403)).toBe('role_not_grantable')
      expect(await errorOf(await call(admin, 'DELETE', `orgs/${orgId}/members/${owner.sub}`), 403)).toBe('role_not_grantable')
      expect(await errorOf(await call(admin, 'POST', `orgs/${orgId}/invitations`, { email: unique('x'), role: 'owner' }), 403)).toBe('role_not_grantable')
      expect(await errorOf(await call(admin, 'POST', `orgs/${orgId}/invitations`, { email: unique('x'), role: 'writer' }), 403)).toBe('role_not_grantable')
      expect(await errorOf(await call(admin, 'PATCH', `orgs/${orgId}/members/${admin.sub}`, { role: 'member' }), 403)).toBe('own_role')
      expect(await errorOf(await call(member, 'POST', `orgs/${orgId}/invitations`, { email: unique('x'), role: 'member' }), 403)).toBe('permission_denied')
      expect(await errorOf(await call(member, 'PATCH', `orgs/${orgId}`, { name: 'Taken over' }), 403)).toBe('permission_denied')
      expect(await errorOf(await call(admin, 'DELETE', `orgs/${orgId}`), 403)).toBe('permission_denied')
      // What an admin may do.
      expect((await json<{ member: { role: string } }>(await call(admin, 'PATCH', `orgs/${orgId}/members/${member.sub}`, { role: 'admin' }))).member.role).toBe('admin')
      expect(await roleOf(owner, orgId, owner.sub)).toBe('owner')
    })

    it('keeps an owner: the last one cannot leave, be removed or be demoted', async () => {
      const owner = await logIn(unique('owner'))
      const orgId = await createOrg(owner)
      expect(await errorOf(await call(owner, 'DELETE', `orgs/${orgId}/members/${owner.sub}`), 409)).toBe('last_owner')
      const second = await join(owner, orgId, 'owner')
      expect(await json(await call(second, 'PATCH', `orgs/${orgId}/members/${owner.sub}`, { role: 'admin' }))).toMatchObject({ member: { role: 'admin' } })
      expect(await errorOf(await call(second, 'DELETE', `orgs/${orgId}/members/${second.sub}`), 409)).toBe('last_owner')
    })

    it('keeps at least one owner under 50 concurrent demotions and removals of the owners', async () => {
      const first = await logIn(unique('owner'))
      const orgId = await createOrg(first)
      const owners = [first, await join(first, orgId, 'owner'), await join(first, orgId, 'owner')]
      await warmUp()
      const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => {
        const actor = owners[i % 3]!
        const target = owners[(i + 1) % 3]!
        return i % 2 ? call(actor, 'DELETE', `orgs/${orgId}/members/${target.sub}`) : call(actor, 'PATCH', `orgs/${orgId}/members/${target.sub}`, { role: 'member' })
      }))
      expect(answers.every(res => res.status < 500)).toBe(true)
      const survivors = await Promise.all(owners.map(async o => (await call(o, 'GET', `orgs/${orgId}/members`)).status === 200 ? o : undefined))
      const viewer = survivors.find(Boolean)!
      const { members } = await json<{ members: Array<{ role: string }> }>(await call(viewer, 'GET', `orgs/${orgId}/members`))
      expect(members.filter(m => m.role === 'owner').length).toBeGreaterThanOrEqual(1)
    })

    it('binds an invitation to its email: another user cannot spend it, the invited one joins once', async () => {
      const owner = await logIn(unique('owner'))
      const orgId = await createOrg(owner)
      const invited = await logIn(unique('invited'))
      const other = await logIn(unique('other'))
      const token = await invite(owner, orgId, invited.email, 'admin')
      expect(sent.at(-1)).toMatchObject({ email: invited.email, role: 'admin', organization: { id: orgId } })
      expect(await errorOf(await call(other, 'POST', 'invitations/accept', { token }), 403)).toBe('invitation_email_mismatch')
      expect(await json(await call(invited, 'POST', 'invitations/accept', { token }))).toMatchObject({ organization: { id: orgId }, role: 'admin' })
      expect(await errorOf(await call(invited, 'POST', 'invitations/accept', { token }), 400)).toBe('invitation_invalid')
      expect(await roleOf(owner, orgId, invited.sub)).toBe('admin')
      // The listing and the answer never hold the token.
      expect(JSON.stringify(await json(await call(owner, 'GET', `orgs/${orgId}/invitations`)))).not.toContain(token)
    })

    it('answers an invitation the same whether or not the address has an account', async () => {
      const owner = await logIn(unique('owner'))
      const orgId = await createOrg(owner)
      const known = await logIn(unique('known'))
      const shape = async (email: string) => {
        const { invitation } = await json<{ invitation: Record<string, unknown> }>(await call(owner, 'POST', `orgs/${orgId}/invitations`, { email, role: 'member' }), 201)
        return Object.keys(invitation).sort()
      }
      expect(await shape(known.email)).toEqual(await shape(unique('nobody')))
    })

    it('lets a person without an account follow the link, register, prove the email and end a member', async () => {
      const owner = await logIn(unique('owner'))
      const orgId = await createOrg(owner)
      const email = unique('newcomer')
      const token = await invite(owner, orgId, email, 'member')
      const b = browser()
      const link = await b.send('GET', `/auth/invitations/accept?token=${encodeURIComponent(token)}`)
      expect(link.status).toBe(302)
      expect(link.headers.get('location')).toBe('/auth/invitation')
      expect(await json(await b.send('POST', '/auth/invitations/lookup', { body: {} }))).toMatchObject({ email, role: 'member', organization: { id: orgId, name: 'Acme' } })
      await register(b, email)
      const user = await logIn(email, b)
      // The token comes from the link's cookie, not from the page's script.
      expect(await json(await call(user, 'POST', 'invitations/accept', {}))).toMatchObject({ organization: { id: orgId }, role: 'member' })
      expect(await roleOf(owner, orgId, user.sub)).toBe('member')
      const bad = await browser().send('GET', '/auth/invitations/accept?token=nope')
      expect(bad.headers.get('location')).toBe('/auth/invitation?error=invitation_invalid')
    })

    it('turns 50 concurrent accepts of one invitation into one membership', async () => {
      const owner = await logIn(unique('owner'))
      const orgId = await createOrg(owner)
      const invited = await logIn(unique('racer'))
      const token = await invite(owner, orgId, invited.email)
      const answers = await Promise.all(Array.from({ length: 50 }, () => call(invited, 'POST', 'invitations/accept', { token })))
      const statuses = answers.map(res => res.status)
      expect(statuses.filter(s => s === 200)).toHaveLength(1)
      expect(statuses.every(s => s === 200 || s === 400 || s === 409)).toBe(true)
      const { members } = await json<{ members: Array<{ userId: string }> }>(await call(owner, 'GET', `orgs/${orgId}/members`))
      expect(members.filter(m => m.userId === invited.sub)).toHaveLength(1)
    })

    it('stops a revoked invitation at once and limits invitations per inviter', async () => {
      const owner = await logIn(unique('owner'))
      const orgId = await createOrg(owner)
      const invited = await logIn(unique('revoked'))
      const token = await invite(owner, orgId, invited.email)
      const { invitations } = await json<{ invitations: Array<{ id: string, email: string }> }>(await call(owner, 'GET', `orgs/${orgId}/invitations`))
      const id = invitations.find(i => i.email === invited.email)!.id
      await json(await call(owner, 'DELETE', `orgs/${orgId}/invitations/${id}`))
      expect(await errorOf(await call(invited, 'POST', 'invitations/accept', { token }), 400)).toBe('invitation_invalid')
      const statuses: number[] = []
      for (let i = 0; i < 41; i++) statuses.push((await call(owner, 'POST', `orgs/${orgId}/invitations`, { email: unique('flood'), role: 'member' })).status)
      expect(statuses.at(-1)).toBe(429)
    })

    it('keeps teams with a role per member, and drops a deleted team from its members', async () => {
      const owner = await logIn(unique('owner'))
      const orgId = await createOrg(owner)
      const member = await join(owner, orgId, 'member')
      const { team } = await json<{ team: { id: string } }>(await call(owner, 'POST', `orgs/${orgId}/teams`, { name: 'Design' }), 201)
      expect(await json(await call(owner, 'PUT', `orgs/${orgId}/teams/${team.id}/members/${member.sub}`, { role: 'admin' }))).toMatchObject({ member: { teams: [{ id: team.id, name: 'Design', role: 'admin' }] } })
      expect(await errorOf(await call(member, 'PUT', `orgs/${orgId}/teams/${team.id}/members/${member.sub}`, { role: 'owner' }), 403)).toBe('permission_denied')
      expect((await json<{ teams: Array<{ id: string, members: number }> }>(await call(member, 'GET', `orgs/${orgId}/teams`))).teams).toEqual([expect.objectContaining({ id: team.id, members: 1 })])
      await json(await call(owner, 'DELETE', `orgs/${orgId}/teams/${team.id}`))
      const { members } = await json<{ members: Array<{ userId: string, teams: unknown[] }> }>(await call(owner, 'GET', `orgs/${orgId}/members`))
      expect(members.find(m => m.userId === member.sub)!.teams).toEqual([])
    })

    it('deletes an organization with its members and invitations', async () => {
      const owner = await logIn(unique('owner'))
      const orgId = await createOrg(owner)
      const member = await join(owner, orgId)
      const invited = await logIn(unique('late'))
      const token = await invite(owner, orgId, invited.email)
      await json(await call(owner, 'DELETE', `orgs/${orgId}`))
      // Every member's token from before is stale; a refresh gives one without the organization.
      expect(await errorOf(await call(member, 'GET', 'orgs'), 401)).toBe('session_stale')
      await Promise.all([refresh(owner), refresh(member)])
      expect(await errorOf(await call(owner, 'GET', `orgs/${orgId}`), 404)).toBe('not_found')
      expect((await json<{ organizations: unknown[] }>(await call(member, 'GET', 'orgs'))).organizations).toEqual([])
      expect(await errorOf(await call(invited, 'POST', 'invitations/accept', { token }), 400)).toBe('invitation_invalid')
    })

    it('limits invitations per organization across its inviters, and a refused invitation counts for neither limit', async () => {
      const owner = await logIn(unique('owner'))
      const orgId = await createOrg(owner)
      const admin = await join(owner, orgId, 'admin')
      // Two inviters at once, 60 invitations for the 44 the organization has left (neither inviter reaches their own limit).
      const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => call(i % 2 ? admin : owner, 'POST', `orgs/${orgId}/invitations`, { email: unique('crowd'), role: 'member' })))
      const statuses = answers.map(res => res.status)
      expect(statuses.filter(s => s === 201)).toHaveLength(PER_ORGANIZATION - 1)
      expect(statuses.filter(s => s === 429)).toHaveLength(60 - (PER_ORGANIZATION - 1))
      const refused = answers.find(res => res.status === 429)!
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(await errorAnswer(refused, 429)).toBe('rate_limited')
      expect((await json<{ invitations: unknown[] }>(await call(owner, 'GET', `orgs/${orgId}/invitations`))).invitations).toHaveLength(PER_ORGANIZATION - 1)
      expect(sent.filter(m => m.organization.id === orgId)).toHaveLength(PER_ORGANIZATION)
      expect(await errorOf(await call(owner, 'POST', `orgs/${orgId}/invitations`, { email: unique('late'), role: 'member' }), 429)).toBe('rate_limited')
      // The admin's refusals did not count against the admin: in another organization they have exactly the rest of their own limit.
      const adminSent = answers.filter((res, i) => i % 2 && res.status === 201).length
      const otherId = await createOrg(admin, 'Other')
      const helper = await join(admin, otherId, 'admin')
      const flood = await inviteUntilRefused(admin, otherId)
      expect(flood).toBe(PER_INVITER - adminSent - 1)
      // Nor did the admin's refusals there count against that organization: its other inviter fills it exactly.
      expect(await inviteUntilRefused(helper, otherId)).toBe(PER_ORGANIZATION - 1 - flood)
    })

    it('gives one explicit slug to exactly one of 50 concurrent creations by different users (409 slug_taken for the rest)', async () => {
      const users = await mintUsers(50, 'founder')
      const slug = `race-${randomUUID().slice(0, 8)}`
      const answers = await Promise.all(users.map(user => call(user, 'POST', 'orgs', { name: 'Race', slug })))
      const bodies = await Promise.all(answers.map(async res => ({ status: res.status, body: await res.json() as { organization?: { id: string, slug: string }, error?: string } })))
      expect(bodies.filter(b => b.status === 201)).toHaveLength(1)
      expect(bodies.filter(b => b.status === 409 && b.body.error === 'slug_taken')).toHaveLength(49)
      const { organization } = bodies.find(b => b.status === 201)!.body
      expect(organization!.slug).toBe(slug)
      // The losers' attempts left nothing: only the winner has an organization, and it has one member.
      const lists = await Promise.all(users.map(async user => (await json<{ organizations: Array<{ id: string }> }>(await call(user, 'GET', 'orgs'))).organizations))
      expect(lists.flat()).toEqual([expect.objectContaining({ id: organization!.id, slug, role: 'owner' })])
      const winner = users[bodies.findIndex(b => b.status === 201)]!
      expect((await json<{ members: unknown[] }>(await call(winner, 'GET', `orgs/${organization!.id}/members`))).members).toHaveLength(1)
      expect(nitro.hooks.filter(([name, payload]) => name === 'svc:org:created' && (payload as { organization: { slug: string } }).organization.slug === slug)).toHaveLength(1)
      expect(await errorOf(await call(users[0]!, 'POST', 'orgs', { name: 'Late', slug }), 409)).toBe('slug_taken')
    })

    it('leaves a member with a role one of two admins wrote, listed once, after 50 concurrent role changes (and keeps team changes made meanwhile)', async () => {
      const owner = await logIn(unique('owner'))
      const orgId = await createOrg(owner)
      const admins = [await join(owner, orgId, 'admin'), await join(owner, orgId, 'admin')]
      const target = await join(owner, orgId, 'member')
      const newTeam = async (name: string) => (await json<{ team: { id: string, name: string } }>(await call(owner, 'POST', `orgs/${orgId}/teams`, { name }), 201)).team
      const teams = [await newTeam('Design'), ...await Promise.all(Array.from({ length: 5 }, (_, i) => newTeam(`Squad ${i}`)))]
      await json(await call(owner, 'PUT', `orgs/${orgId}/teams/${teams[0]!.id}/members/${target.sub}`, { role: 'member' }))
      const roles = ['admin', 'member']
      // Two admins change the member's role 50 times while the owner adds the member to five more teams:
      // every change reads the member under the organization's lease, so none writes back a stale copy.
      const changes = Array.from({ length: 50 }, (_, i) => () => call(admins[i % 2]!, 'PATCH', `orgs/${orgId}/members/${target.sub}`, { role: roles[(i >> 1) % 2] }))
      teams.slice(1).forEach((team, i) => changes.splice(i * 10 + 5, 0, () => call(owner, 'PUT', `orgs/${orgId}/teams/${team.id}/members/${target.sub}`, { role: 'member' })))
      await warmUp()
      const answers = await Promise.all(changes.map(change => change()))
      expect(await Promise.all(answers.map(async res => `${res.status} ${res.status === 200 ? '' : await res.text()}`))).toEqual(answers.map(() => '200 '))
      const { members } = await json<{ members: Array<{ userId: string, role: string, teams: Array<{ id: string }> }> }>(await call(owner, 'GET', `orgs/${orgId}/members`))
      const rows = members.filter(m => m.userId === target.sub)
      expect(rows).toHaveLength(1)
      const role = rows[0]!.role
      expect(roles).toContain(role)
      const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id)
      expect(rows[0]!.teams.sort(byId)).toEqual(teams.map(team => ({ id: team.id, name: team.name, role: 'member' })).sort(byId))
      // The member's own list and membership agree with the member list.
      expect(await errorOf(await call(target, 'GET', 'orgs'), 401)).toBe('session_stale')
      await refresh(target)
      const mine = (await json<{ organizations: Array<{ id: string, role: string }> }>(await call(target, 'GET', 'orgs'))).organizations
      expect(mine.filter(o => o.id === orgId)).toEqual([expect.objectContaining({ id: orgId, role })])
      expect((await json<{ role: string }>(await call(target, 'GET', `orgs/${orgId}`))).role).toBe(role)
      expect(await roleOf(owner, orgId, owner.sub)).toBe('owner')
    })

    it('answers a malformed body, an oversized body and a role that is not a string with a 400 or 413 JSON error, never a 500', async () => {
      const owner = await logIn(unique('owner'))
      const orgId = await createOrg(owner)
      const member = await join(owner, orgId)
      const { team } = await json<{ team: { id: string } }>(await call(owner, 'POST', `orgs/${orgId}/teams`, { name: 'Core' }), 201)
      const raw = (method: string, path: string, body: string | ReadableStream<Uint8Array>) => owner.b.send(method, `/auth/${path}`, { raw: body, bearer: owner.token })
      for (const [method, path] of [['POST', 'orgs'], ['PATCH', `orgs/${orgId}`], ['PATCH', `orgs/${orgId}/members/${member.sub}`], ['POST', `orgs/${orgId}/invitations`], ['PUT', `orgs/${orgId}/teams/${team.id}/members/${member.sub}`]] as const) {
        for (const body of ['{"name":', '{name: "x"}', '{"role":"admin"', '\u0000', '"a string"', '[1,2]']) {
          expect(`${method} ${path} ${body}: ${await errorAnswer(await raw(method, path, body), 400)}`).toMatch(/: bad_request$/)
        }
      }
      // Over security.maxBodySize, with a length and chunked: 413 before the body is read.
      const huge = JSON.stringify({ name: 'x'.repeat(app.options.security.maxBodySize + 1) })
      expect(await errorAnswer(await raw('POST', 'orgs', huge), 413)).toBe('payload_too_large')
      expect(await errorAnswer(await raw('PATCH', `orgs/${orgId}`, huge), 413)).toBe('payload_too_large')
      const chunks = new TextEncoder().encode(huge)
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < chunks.length; i += 4096) controller.enqueue(chunks.slice(i, i + 4096))
          controller.close()
        },
      })
      expect(await errorAnswer(await raw('POST', 'orgs', stream), 413)).toBe('payload_too_large')
      // Within the body limit but over the name's: 400.
      expect(await errorAnswer(await call(owner, 'POST', 'orgs', { name: 'x'.repeat(1000) }), 400)).toBe('bad_request')
      // Roles that are not strings.
      for (const role of [42, null, ['owner'], { owner: true }, true]) {
        expect(await errorAnswer(await call(owner, 'PATCH', `orgs/${orgId}/members/${member.sub}`, { role }), 400)).toBe('bad_request')
        expect(await errorAnswer(await call(owner, 'POST', `orgs/${orgId}/invitations`, { email: unique('x'), role }), 400)).toBe('bad_request')
        expect(await errorAnswer(await call(owner, 'PUT', `orgs/${orgId}/teams/${team.id}/members/${member.sub}`, { role }), 400)).toBe('bad_request')
      }
      // Nothing changed.
      expect(await roleOf(owner, orgId, member.sub)).toBe('member')
      expect((await json<{ organizations: Array<{ id: string, name: string }> }>(await call(owner, 'GET', 'orgs'))).organizations).toEqual([expect.objectContaining({ id: orgId, name: 'Acme' })])
      expect((await json<{ invitations: unknown[] }>(await call(owner, 'GET', `orgs/${orgId}/invitations`))).invitations).toEqual([])
    })

    it('keeps the organizations handlers of one plugin when another plugin registers others', async () => {
      defineAuthHandlers({ organizations: { resolveRoles: () => [] } })
      const owner = await logIn(unique('owner'))
      const orgId = await createOrg(owner)
      const email = unique('merged')
      await json(await call(owner, 'POST', `orgs/${orgId}/invitations`, { email, role: 'member' }), 201)
      expect(sent.at(-1)?.email).toBe(email)
    })
  })
}
