import type { Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { CookieJar } from '../helpers/cookie-jar'
import { resolveOptions } from '../../src/build/resolve-options'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { passwordRoutePath } from '../../src/runtime/password/password-paths'
import { peekAuthContext } from '../../src/runtime/server/utils/auth-context'
import type { InvitationMessage } from '../../src/runtime/organizations/organization-types'
import type { ModuleOptions } from '../../src/runtime/types/options'
import { memoryPasswordAccounts, serveModule } from './helpers/module-router'

// Organizations through their real routes on a plain h3 app on a loopback port: the rules of the
// issue (isolation, no escalation, always an owner, invitations bound to a verified email) and the
// races on one store.
const nitro = vi.hoisted(() => ({ options: undefined as unknown, base: '', hooks: [] as Array<[string, unknown]> }))
vi.mock('nitropack/runtime', () => ({
  useRuntimeConfig: () => ({ svcAuth: nitro.options }),
  useNitroApp: () => ({
    hooks: { callHook: async (name: string, payload: unknown) => void nitro.hooks.push([name, payload]) },
    localFetch: (path: string, init: RequestInit) => fetch(`${nitro.base}${path}`, init),
  }),
}))

const PASSWORD = 'Sunflower-42x'
let server: Server
let base = ''
let options: ModuleOptions
const { codes, handlers: passwordAccounts } = memoryPasswordAccounts()
const sent: InvitationMessage[] = []

beforeAll(async () => {
  options = resolveOptions({
    token: { secret: 'organizations-secret-0123456789-abcdefghij' },
    tokenRefresh: { storage: { driver: 'memory' } },
    logging: { level: 'silent' },
    providers: { password: { passwordHashRounds: 4 } },
    rateLimit: { enabled: false },
    organizations: {
      roles: { owner: ['*'], admin: ['org:read', 'org:update', 'member:*', 'invitation:*', 'team:*'], member: ['org:read', 'member:read', 'team:read'], writer: ['org:read', 'project:write'] },
      invitationsPerInviter: 40,
    },
  }, false)
  nitro.options = options
  const served = await serveModule(options)
  server = served.server
  base = served.base
  nitro.base = base
  defineAuthHandlers({ password: passwordAccounts, organizations: { sendInvitation: message => void sent.push(message) } })
})

afterAll(async () => {
  resetAuthHandlers()
  server?.closeAllConnections()
  await new Promise(resolve => server?.close(resolve))
  await peekAuthContext()?.dispose()
})

/** One browser: its cookies, and JSON requests to the app as its own origin. */
function browser() {
  const jar = new CookieJar()
  const send = async (method: string, path: string, { body, bearer }: { body?: unknown, bearer?: string } = {}) => {
    const headers: Record<string, string> = { accept: 'application/json', cookie: jar.header() }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (bearer) headers.authorization = `Bearer ${bearer}`
    const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), redirect: 'manual' })
    jar.store(res)
    return res
  }
  return { jar, send }
}
type Browser = ReturnType<typeof browser>

async function json<T>(res: Response, status = 200): Promise<T> {
  const body = await res.json() as T
  expect(res.status, JSON.stringify(body)).toBe(status)
  return body
}
const errorOf = async (res: Response, status: number) => (await json<{ error: string }>(res, status)).error

const password = (path: string) => passwordRoutePath(options.endpoints.authPath, path)
const lastCode = (email: string, action: string) => codes.filter(c => c.email === email && c.action === action).at(-1)!.code

async function register(b: Browser, email: string): Promise<void> {
  await json(await b.send('POST', password('register'), { body: { email, password: PASSWORD } }))
  await json(await b.send('POST', password('register-verify'), { body: { code: lastCode(email, 'register'), email } }))
}

/** A user: a browser with a password session (registered first when new), its token and `sub`. */
interface User { b: Browser, token: string, sub: string, email: string }

async function logIn(email: string, b: Browser = browser()): Promise<User> {
  if (!passwordAccounts.findUser!(email)) await register(browser(), email)
  await json(await b.send('POST', password('login'), { body: { email, password: PASSWORD } }))
  const { redirect } = await json<{ redirect: string }>(await b.send('POST', password('login-verify'), { body: { code: lastCode(email, 'login'), email } }))
  const code = new URL(redirect, base).searchParams.get('code')!
  const { accessToken } = await json<{ accessToken: string }>(await b.send('POST', options.endpoints.tokenPath, { body: { code } }))
  return { b, token: accessToken, sub: `id-${email}`, email }
}

let n = 0
const unique = (name: string) => `${name}-${++n}-${Math.random().toString(36).slice(2, 8)}@example.com`

/** A refresh of `user`'s session, as the client does on 401 `session_stale`: the new token replaces the old. */
async function refresh(user: User): Promise<void> {
  user.token = (await json<{ accessToken: string }>(await user.b.send('POST', options.endpoints.refreshPath, { body: {} }))).accessToken
}

/** `user`'s request under the auth path. */
const call = (user: User, method: string, path: string, body?: unknown) => user.b.send(method, `/auth/${path}`, { body, bearer: user.token })

async function createOrg(owner: User, name = 'Acme'): Promise<string> {
  const { organization } = await json<{ organization: { id: string } }>(await call(owner, 'POST', 'orgs', { name }), 201)
  return organization.id
}

/** Invites `email` as `role` and returns the emailed token. */
async function invite(inviter: User, orgId: string, email: string, role = 'member'): Promise<string> {
  await json(await call(inviter, 'POST', `orgs/${orgId}/invitations`, { email, role }), 201)
  const message = sent.findLast(m => m.email === email)!
  return new URL(message.link, base).searchParams.get('token')!
}

async function join(inviter: User, orgId: string, role = 'member'): Promise<User> {
  const user = await logIn(unique('joiner'))
  const token = await invite(inviter, orgId, user.email, role)
  await json(await call(user, 'POST', 'invitations/accept', { token }))
  return user
}

const roleOf = async (viewer: User, orgId: string, userId: string) =>
  (await json<{ members: Array<{ userId: string, role: string }> }>(await call(viewer, 'GET', `orgs/${orgId}/members`))).members.find(m => m.userId === userId)?.role

describe('organizations', () => {
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

  it('keeps the organizations handlers of one plugin when another plugin registers others', async () => {
    defineAuthHandlers({ organizations: { resolveRoles: () => [] } })
    const owner = await logIn(unique('owner'))
    const orgId = await createOrg(owner)
    const email = unique('merged')
    await json(await call(owner, 'POST', `orgs/${orgId}/invitations`, { email, role: 'member' }), 201)
    expect(sent.at(-1)?.email).toBe(email)
  })
})
