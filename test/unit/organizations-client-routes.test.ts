import type { Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { ref } from 'vue'
import { CookieJar } from '../helpers/cookie-jar'
import { resolveOptions, toPublicConfig } from '../../src/build/resolve-options'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { passwordRoutePath } from '../../src/runtime/password/password-paths'
import { peekAuthContext } from '../../src/runtime/server/utils/auth-context'
import type { InvitationMessage } from '../../src/runtime/organizations/organization-types'
import { organizationsSchema } from '../../src/runtime/organizations/server/organizations-options'
import type { ModuleOptions } from '../../src/runtime/types/options'
import { memoryPasswordAccounts, serveModule } from './helpers/module-router'

// useOrganizations() and the invitation page in fake Nuxt apps (one per browser, each with its own
// cookie jar) against the real organizations routes on a loopback port: the client and the server
// agree on paths, bodies, answers, the invitation cookie and the error codes.
const env = vi.hoisted(() => ({
  states: new Map<string, { value: unknown }>(),
  navigations: [] as string[],
  route: { path: '/auth/invitation', fullPath: '/auth/invitation', query: {} as Record<string, unknown> },
  app: undefined as unknown,
  nitro: { options: undefined as unknown, base: '' },
}))

vi.mock('#imports', async () => {
  const { fakeUseState } = await import('./helpers/nuxt-state')
  return {
    useNuxtApp: () => env.app,
    useRoute: () => env.route,
    useState: fakeUseState(() => env.states),
    navigateTo: (path: string) => void env.navigations.push(path),
  }
})
vi.mock('#build/svc-auth/client-features.mjs', async () => ({ passkey: undefined, organizations: await import('../../src/runtime/organizations/app/organization-access') }))
vi.mock('#build/svc-auth/page-texts.mjs', () => ({ default: {} }))
vi.mock('nitropack/runtime', () => ({
  useRuntimeConfig: () => ({ svcAuth: env.nitro.options }),
  useNitroApp: () => ({
    hooks: { callHook: async () => {} },
    localFetch: (path: string, init: RequestInit) => fetch(`${env.nitro.base}${path}`, init),
  }),
}))

const { useOrganizations } = await import('../../src/runtime/organizations/app/useOrganizations')
const { useInvitationPage } = await import('../../src/runtime/organizations/app/invitation-page')
const { ACCESS_TOKEN_STATE, SESSION_STATE } = await import('../../src/runtime/app/state')
const { userFromToken } = await import('../../src/runtime/app/lib/token-payload')

const PASSWORD = 'Sunflower-42x'
let server: Server
let base = ''
let options: ModuleOptions
const { codes, handlers: passwordAccounts } = memoryPasswordAccounts()
const sent: InvitationMessage[] = []

/** A browser: its cookies, and the app state of its tab (`useState`). */
interface Browser { jar: CookieJar, states: Map<string, { value: unknown }>, app: unknown }
let current: Browser

/** `$fetch` as the browser's: relative URLs on the server, the jar's cookies, FetchError-like refusals. */
async function browserFetch(url: string, init: { method?: string, body?: unknown, headers?: HeadersInit } = {}) {
  const headers = new Headers(init.headers)
  headers.set('accept', 'application/json')
  if (current.jar.size) headers.set('cookie', current.jar.header())
  if (init.body !== undefined) headers.set('content-type', 'application/json')
  const res = await fetch(`${base}${url}`, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body), redirect: 'manual' })
  current.jar.store(res)
  const data: unknown = (res.headers.get('content-type') ?? '').includes('json') ? await res.json() : await res.text()
  if (!res.ok) throw Object.assign(new Error(`${res.status} ${url}`), { status: res.status, statusCode: res.status, data })
  return data
}

/** A new browser with a fresh tab of the app; `use` makes it the current one. */
function newBrowser(): Browser {
  const states = new Map<string, { value: unknown }>()
  const app = {
    $config: { public: { svcAuth: toPublicConfig(options) }, app: { baseURL: '/' } },
    isHydrating: false,
    hooks: { hookOnce: () => {} },
    runWithContext: (fn: () => unknown) => fn(),
  }
  return { jar: new CookieJar(), states, app }
}
function use(b: Browser): Browser {
  current = b
  env.states = b.states
  env.app = b.app
  env.navigations = []
  return b
}

const lastCode = (email: string, action: string) => codes.filter(c => c.email === email && c.action === action).at(-1)!.code

/** Registers (when new) and logs `email` in in the current browser, as the app does after the callback page. */
async function logIn(email: string): Promise<string> {
  const path = (name: string) => passwordRoutePath(options.endpoints.authPath, name)
  if (!passwordAccounts.findUser!(email)) {
    await browserFetch(path('register'), { method: 'POST', body: { email, password: PASSWORD } })
    await browserFetch(path('register-verify'), { method: 'POST', body: { code: lastCode(email, 'register'), email } })
  }
  await browserFetch(path('login'), { method: 'POST', body: { email, password: PASSWORD } })
  const { redirect } = await browserFetch(path('login-verify'), { method: 'POST', body: { code: lastCode(email, 'login'), email } }) as { redirect: string }
  const { accessToken } = await browserFetch(options.endpoints.tokenPath, { method: 'POST', body: { code: new URL(redirect, base).searchParams.get('code') } }) as { accessToken: string }
  env.states.set(ACCESS_TOKEN_STATE, ref(accessToken))
  env.states.set(SESSION_STATE, ref({ user: userFromToken(accessToken), checked: true, pending: false }))
  return `id-${email}`
}

const tokenOfLink = (email: string) => new URL(sent.findLast(m => m.email === email)!.link, base).searchParams.get('token')!

beforeAll(async () => {
  options = resolveOptions({
    token: { secret: 'organizations-client-secret-0123456789-abcdef' },
    tokenRefresh: { storage: { driver: 'memory' } },
    logging: { level: 'silent' },
    providers: { password: { passwordHashRounds: 4 } },
    rateLimit: { invitation: { perIp: 0, perEmail: 0, window: 900 } },
    clientMiddleware: { enabled: true, global: true, redirectTo: '/login', loggedOutRedirectTo: '/profile' },
    // As the server reads them: with every default.
    organizations: organizationsSchema.parse({ redirectAfterAccept: '/orgs' }),
  }, false)
  env.nitro.options = options
  const served = await serveModule(options)
  server = served.server
  base = served.base
  env.nitro.base = base
  defineAuthHandlers({ password: passwordAccounts, organizations: { sendInvitation: message => void sent.push(message) } })
  vi.stubGlobal('$fetch', Object.assign(browserFetch, { raw: browserFetch }))
})

afterAll(async () => {
  vi.unstubAllGlobals()
  resetAuthHandlers()
  server?.closeAllConnections()
  await new Promise(resolve => server?.close(resolve))
  await peekAuthContext()?.dispose()
})

describe('useOrganizations against the organizations routes', () => {
  it('an owner creates, renames, makes a team, invites; the invited person looks up, logs in and joins on the invitation page', async () => {
    const alice = use(newBrowser())
    const aliceId = await logIn('alice@example.com')
    const orgs = useOrganizations()
    expect(await orgs.refresh()).toEqual([])
    const { organization, role } = await orgs.create({ name: 'Acme' })
    expect(role).toBe('owner')
    expect(orgs.organizations.value).toEqual([{ id: organization.id, name: 'Acme', slug: organization.slug, role: 'owner' }])
    expect(await orgs.refresh()).toEqual(orgs.organizations.value)
    expect(await orgs.update(organization.id, { name: 'Acme Inc' })).toMatchObject({ id: organization.id, name: 'Acme Inc' })
    expect(orgs.organizations.value[0]!.name).toBe('Acme Inc')
    expect(await orgs.get(organization.id)).toMatchObject({ organization: { name: 'Acme Inc' }, role: 'owner' })

    const team = await orgs.createTeam(organization.id, 'Core')
    expect((await orgs.teams(organization.id)).map(t => t.id)).toEqual([team.id])
    const sentInvitation = await orgs.invite(organization.id, { email: 'bob@example.com', role: 'admin', teamId: team.id })
    expect(sentInvitation).toMatchObject({ email: 'bob@example.com', role: 'admin' })
    expect((await orgs.invitations(organization.id)).map(i => i.id)).toEqual([sentInvitation.id])

    // Bob, logged out in his own browser, follows the emailed link: the token goes into a cookie.
    const bob = use(newBrowser())
    await browserFetch(`/auth/invitations/accept?token=${encodeURIComponent(tokenOfLink('bob@example.com'))}`).catch(() => {})
    expect(bob.jar.size).toBeGreaterThan(0)
    const page = useInvitationPage()
    await page.start()
    expect(page.view.value).toMatchObject({ step: 'invited', invitation: { organization: { id: organization.id, name: 'Acme Inc' }, email: 'bob@example.com', role: 'admin' }, loginUrl: '/login?redirect=%2Fauth%2Finvitation' })

    // He registers and logs in (the login page sends him back), and the page accepts with the cookie.
    const bobId = await logIn('bob@example.com')
    const back = useInvitationPage()
    await back.start()
    expect(back.view.value).toMatchObject({ step: 'accepted', organization: { id: organization.id }, role: 'admin' })
    expect(env.navigations).toEqual(['/orgs'])
    expect(useOrganizations().organizations.value.map(o => [o.id, o.role])).toEqual([[organization.id, 'admin']])

    // Alice sees him, with his team; changes his role; he cannot change his own.
    use(alice)
    const members = await orgs.members(organization.id)
    expect(members.find(m => m.userId === bobId)).toMatchObject({ email: 'bob@example.com', role: 'admin', teams: [{ id: team.id, name: 'Core' }] })
    expect(await orgs.updateMember(organization.id, bobId, 'member')).toMatchObject({ userId: bobId, role: 'member' })
    expect(await orgs.setTeamMember(organization.id, team.id, bobId, 'member')).toMatchObject({ teams: [{ id: team.id, role: 'member' }] })
    await orgs.removeTeamMember(organization.id, team.id, bobId)
    use(bob)
    const bobsOrgs = useOrganizations()
    const own = await bobsOrgs.updateMember(organization.id, bobId, 'owner').catch((e: unknown) => e)
    expect(bobsOrgs.errorOf(own).error).toBe('own_role')

    // The last owner stays; Bob leaves; then Alice deletes the organization.
    use(alice)
    expect(orgs.errorOf(await orgs.leave(organization.id).catch((e: unknown) => e)).error).toBe('last_owner')
    use(bob)
    await bobsOrgs.leave(organization.id)
    expect(bobsOrgs.organizations.value).toEqual([])
    use(alice)
    expect((await orgs.members(organization.id)).map(m => m.userId)).toEqual([aliceId])
    await orgs.deleteTeam(organization.id, team.id)
    await orgs.revokeInvitation(organization.id, sentInvitation.id).catch(() => {})
    await orgs.remove(organization.id)
    expect(await orgs.refresh()).toEqual([])
  })

  it('the invitation page shows the server\'s refusals: another address, a used link, an unknown link', async () => {
    const owner = use(newBrowser())
    await logIn('owner2@example.com')
    const orgs = useOrganizations()
    const { organization } = await orgs.create({ name: 'Beta' })
    await orgs.invite(organization.id, { email: 'carol@example.com' })

    // Dave follows Carol's link while logged in as himself.
    use(newBrowser())
    await browserFetch(`/auth/invitations/accept?token=${encodeURIComponent(tokenOfLink('carol@example.com'))}`).catch(() => {})
    await logIn('dave@example.com')
    const page = useInvitationPage()
    await page.start()
    expect(page.view.value).toMatchObject({ step: 'failed', error: 'invitation_email_mismatch', invitation: { email: 'carol@example.com' } })
    expect(env.navigations).toEqual([])

    // Carol accepts; the same link again is refused as used.
    use(newBrowser())
    await browserFetch(`/auth/invitations/accept?token=${encodeURIComponent(tokenOfLink('carol@example.com'))}`).catch(() => {})
    await logIn('carol@example.com')
    expect(await useOrganizations().accept()).toMatchObject({ organization: { id: organization.id }, role: 'member' })
    const again = await useOrganizations().accept(tokenOfLink('carol@example.com')).catch((e: unknown) => e)
    expect(useOrganizations().errorOf(again).error).toBe('invitation_invalid')

    // A logged-out browser without a link's cookie.
    use(newBrowser())
    const none = useInvitationPage()
    await none.start()
    expect(none.view.value).toMatchObject({ step: 'failed', error: 'invitation_invalid' })
    use(owner)
  })
})
