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
import { withLease } from '../../src/runtime/server/lib/edge/lease'
import { ORG_RECORDS } from '../../src/runtime/organizations/server/org-records'
import { createAuthorizationCode } from '../../src/runtime/server/utils/authorization-code'
import { fakeEvent } from './helpers/event'
import { permitted } from '../../src/runtime/organizations/server/permission-check'

// Findings of a review of organizations, each as the behaviour the rules and docs promise: the real routes on a
// plain h3 app on a loopback port (the set-up of organizations.test.ts).
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

const status = async (pending: Promise<Response>) => (await pending).status
const sleep = (ms: number) => new Promise<void>(resolve => setTimeout(resolve, ms))

async function createTeam(owner: User, orgId: string, name = 'Platform'): Promise<string> {
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
    const { accessToken } = await json<{ accessToken: string }>(await b.send('POST', options.endpoints.tokenPath, { body: { code } }))
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
