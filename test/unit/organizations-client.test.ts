import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ref } from 'vue'
import { resolveOptions, toPublicConfig } from '../../src/build/resolve-options'
import type { ModuleOptionsInput, PublicAuthConfig } from '../../src/runtime/types/options'
import { DEFAULT_ROLES } from '../../src/runtime/organizations/server/organizations-options'
import { buildStepContext, pagesAfter } from './helpers/build-steps'

// useOrganizations() and the invitation page against a fake Nuxt app: `useState` is a map of refs,
// `navigateTo` records where it goes, `useRoute` is the page's route, and the global `$fetch`
// answers like the module's organizations routes.
const env = vi.hoisted(() => ({
  states: new Map<string, { value: unknown }>(),
  navigations: [] as Array<{ path: string, options?: Record<string, unknown> }>,
  route: { path: '/auth/invitation', fullPath: '/auth/invitation', query: {} as Record<string, unknown> },
  app: undefined as unknown,
}))

vi.mock('#imports', async () => {
  const { fakeUseState } = await import('./helpers/nuxt-state')
  return {
    useNuxtApp: () => env.app,
    useRoute: () => env.route,
    useState: fakeUseState(() => env.states),
    navigateTo: (path: string, options?: Record<string, unknown>) => {
      env.navigations.push({ path, options })
    },
  }
})
vi.mock('#build/svc-auth/client-features.mjs', async () => ({ passkey: undefined, organizations: await import('../../src/runtime/organizations/app/organization-access') }))
vi.mock('#build/svc-auth/page-texts.mjs', () => ({ default: {} }))

const kit = vi.hoisted(() => ({ addImports: vi.fn(), extendPages: vi.fn() }))
vi.mock('@nuxt/kit', () => kit)

const { useOrganizations, ORGANIZATIONS_STATE } = await import('../../src/runtime/organizations/app/useOrganizations')
const { openInvitation, useInvitationPage, INVITATION_MESSAGES } = await import('../../src/runtime/organizations/app/invitation-page')
const { ACCESS_TOKEN_STATE, SESSION_STATE } = await import('../../src/runtime/app/state')
const { setupOrganizationsClient } = await import('../../src/build/organizations')
type InvitationPageDeps = import('../../src/runtime/organizations/app/invitation-page').InvitationPageDeps

interface Request {
  url: string
  method: string
  body?: Record<string, unknown>
  authorization: string | null
  credentials?: string
}

type Answer = unknown | ((request: Request) => unknown)

/** An error as ofetch throws it for an error answer of the module: status and `{ statusCode, message, error }`. */
function refusal(status: number, error: string, message = error) {
  return Object.assign(new Error(`${status} ${error}`), { status, statusCode: status, data: { statusCode: status, error, message } })
}

let requests: Request[] = []
let answers: Map<string, Answer[]>

/** The next answers of `METHOD url` (each used once; a function sees the request, an Error is thrown). */
function answer(key: string, ...next: Answer[]) {
  answers.set(key, [...(answers.get(key) ?? []), ...next])
}

async function fakeFetch(url: string, options: { method?: string, body?: Record<string, unknown>, headers?: HeadersInit, credentials?: string } = {}) {
  const headers = new Headers(options.headers)
  const method = options.method ?? 'GET'
  const request: Request = { url, method, body: options.body, authorization: headers.get('authorization'), credentials: options.credentials }
  requests.push(request)
  const next = answers.get(`${method} ${url}`)?.shift()
  if (next === undefined) throw Object.assign(new Error(`no answer for ${method} ${url}`), { data: undefined })
  const value = typeof next === 'function' ? (next as (r: Request) => unknown)(request) : next
  if (value instanceof Error) throw value
  return value
}

function jwt(payload: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${part({ alg: 'HS256' })}.${part(payload)}.signature`
}

/** A fresh fake Nuxt app (empty state) of the module's public config for `input`. */
function fakeApp(input: ModuleOptionsInput = {}) {
  const svcAuth: PublicAuthConfig = toPublicConfig(resolveOptions({
    redirect: { success: '/dashboard', error: '/error', logout: '/' },
    clientMiddleware: { enabled: true, global: true, redirectTo: '/login', loggedOutRedirectTo: '/profile' },
    organizations: {},
    ...input,
  }, true))
  env.states.clear()
  env.navigations = []
  env.app = {
    $config: { public: { svcAuth }, app: { baseURL: '/' } },
    isHydrating: false,
    hooks: { hookOnce: () => {} },
    runWithContext: (fn: () => unknown) => fn(),
  }
  return env.app
}

/** Logs the fake app in with an access token of these claims (as a refresh would). */
function logIn(claims: Record<string, unknown>): string {
  const token = jwt({ jti: 'j', sid: 's', ...claims })
  const { jti, sid, ...user } = { jti: 'j', sid: 's', ...claims }
  env.states.set(ACCESS_TOKEN_STATE, ref(token))
  env.states.set(SESSION_STATE, ref({ user, checked: true, pending: false }))
  return token
}

const organization = (id: string, name: string, slug: string) => ({ id, name, slug, createdAt: '2026-01-01T00:00:00.000Z' })
const ACME = organization('org_acme0000000000000000000', 'Acme', 'acme')
const BETA = organization('org_beta0000000000000000000', 'Beta', 'beta')
const PREVIEW = { organization: { id: ACME.id, name: 'Acme', slug: 'acme' }, email: 'una@example.com', role: 'member', expiresAt: '2026-01-08T00:00:00.000Z' }
const calls = () => requests.map(r => `${r.method} ${r.url}`)

beforeEach(() => {
  requests = []
  answers = new Map()
  vi.stubGlobal('$fetch', Object.assign(fakeFetch, { raw: fakeFetch }))
  fakeApp()
})

afterEach(() => {
  vi.unstubAllGlobals()
  vi.clearAllMocks()
})

describe('useOrganizations: the list and the active organization', () => {
  it('refresh loads the user\'s organizations with the access token into the app\'s state', async () => {
    const token = logIn({ sub: 'ada' })
    const orgs = useOrganizations()
    expect(orgs.organizations.value).toEqual([])
    expect(orgs.loaded.value).toBe(false)
    answer('GET /auth/orgs', { organizations: [{ id: ACME.id, name: 'Acme', slug: 'acme', role: 'owner' }] })
    const list = await orgs.refresh()
    expect(requests).toEqual([expect.objectContaining({ url: '/auth/orgs', method: 'GET', authorization: `Bearer ${token}` })])
    expect(list).toEqual([{ id: ACME.id, name: 'Acme', slug: 'acme', role: 'owner' }])
    expect(orgs.organizations.value).toEqual(list)
    expect(orgs.loaded.value).toBe(true)
    // In useState, shared by every useOrganizations() of the app.
    expect(env.states.get(ORGANIZATIONS_STATE)?.value).toEqual({ list, loaded: true })
    expect(useOrganizations().organizations.value).toEqual(list)
  })

  it('keeps nothing at module level: another app starts with an empty list', async () => {
    logIn({ sub: 'ada' })
    answer('GET /auth/orgs', { organizations: [{ id: ACME.id, name: 'Acme', slug: 'acme', role: 'owner' }] })
    await useOrganizations().refresh()
    fakeApp()
    expect(useOrganizations().organizations.value).toEqual([])
    expect(useOrganizations().loaded.value).toBe(false)
  })

  it('an answer without a list reads as an empty list', async () => {
    logIn({ sub: 'ada' })
    answer('GET /auth/orgs', {})
    expect(await useOrganizations().refresh()).toEqual([])
  })

  it('create posts the name and slug and adds the organization with the creator\'s role', async () => {
    logIn({ sub: 'ada' })
    const orgs = useOrganizations()
    answer('POST /auth/orgs', { organization: ACME, role: 'owner' })
    expect(await orgs.create({ name: 'Acme', slug: 'acme' })).toEqual({ organization: ACME, role: 'owner' })
    expect(requests[0]!.body).toEqual({ name: 'Acme', slug: 'acme' })
    expect(orgs.organizations.value).toEqual([{ id: ACME.id, name: 'Acme', slug: 'acme', role: 'owner' }])
  })

  it('update renames the entry of the list; get reads one organization', async () => {
    logIn({ sub: 'ada' })
    const orgs = useOrganizations()
    answer('GET /auth/orgs', { organizations: [{ id: ACME.id, name: 'Acme', slug: 'acme', role: 'owner' }, { id: BETA.id, name: 'Beta', slug: 'beta', role: 'member' }] })
    await orgs.refresh()
    answer(`PATCH /auth/orgs/${ACME.id}`, { organization: { ...ACME, name: 'Acme Inc', slug: 'acme-inc' } })
    expect(await orgs.update(ACME.id, { name: 'Acme Inc', slug: 'acme-inc' })).toMatchObject({ name: 'Acme Inc', slug: 'acme-inc' })
    expect(requests.at(-1)!.body).toEqual({ name: 'Acme Inc', slug: 'acme-inc' })
    expect(orgs.organizations.value.map(o => [o.name, o.slug, o.role])).toEqual([['Acme Inc', 'acme-inc', 'owner'], ['Beta', 'beta', 'member']])
    answer(`GET /auth/orgs/${BETA.id}`, { organization: BETA, role: 'member' })
    expect(await orgs.get(BETA.id)).toEqual({ organization: BETA, role: 'member' })
  })

  it('switch posts the choice and uses the new access token at once: active follows its org and orgRole claims', async () => {
    logIn({ sub: 'ada' })
    const orgs = useOrganizations()
    answer('GET /auth/orgs', { organizations: [{ id: ACME.id, name: 'Acme', slug: 'acme', role: 'owner' }] })
    await orgs.refresh()
    expect(orgs.active.value).toBeNull()

    const switched = jwt({ sub: 'ada', org: ACME.id, orgRole: 'owner', jti: 'j2', sid: 's' })
    answer('POST /auth/orgs/active', { accessToken: switched, tokenType: 'Bearer' })
    await orgs.switch(ACME.id)
    expect(requests.at(-1)).toMatchObject({ url: '/auth/orgs/active', method: 'POST', body: { orgId: ACME.id } })
    expect(env.states.get(ACCESS_TOKEN_STATE)?.value).toBe(switched)
    expect(orgs.active.value).toEqual({ id: ACME.id, role: 'owner', name: 'Acme', slug: 'acme' })
    // The next request carries the new token.
    answer('GET /auth/orgs', { organizations: [] })
    await orgs.refresh()
    expect(requests.at(-1)!.authorization).toBe(`Bearer ${switched}`)
    // Known by id and role alone while the list does not hold it.
    expect(orgs.active.value).toEqual({ id: ACME.id, role: 'owner' })

    answer('POST /auth/orgs/active', { accessToken: jwt({ sub: 'ada', jti: 'j3', sid: 's' }), tokenType: 'Bearer' })
    await orgs.switch(null)
    expect(requests.at(-1)!.body).toEqual({ orgId: null })
    expect(orgs.active.value).toBeNull()
  })

  it('switch rejects an answer without a token and keeps the session as it was', async () => {
    const token = logIn({ sub: 'ada', org: ACME.id, orgRole: 'owner' })
    const orgs = useOrganizations()
    answer('POST /auth/orgs/active', { ok: true })
    await expect(orgs.switch(BETA.id)).rejects.toThrow(/no access token/i)
    expect(env.states.get(ACCESS_TOKEN_STATE)?.value).toBe(token)
    expect(orgs.active.value?.id).toBe(ACME.id)
  })

  it('deleting or leaving the active organization switches to none; another one leaves the token alone', async () => {
    logIn({ sub: 'mock:ada', org: ACME.id, orgRole: 'owner' })
    const orgs = useOrganizations()
    answer('GET /auth/orgs', { organizations: [{ id: ACME.id, name: 'Acme', slug: 'acme', role: 'owner' }, { id: BETA.id, name: 'Beta', slug: 'beta', role: 'member' }] })
    await orgs.refresh()

    answer(`DELETE /auth/orgs/${encodeURIComponent(BETA.id)}/members/mock%3Aada`, { success: true })
    await orgs.leave(BETA.id)
    expect(calls().slice(1)).toEqual([`DELETE /auth/orgs/${BETA.id}/members/mock%3Aada`])
    expect(orgs.organizations.value.map(o => o.id)).toEqual([ACME.id])

    answer(`DELETE /auth/orgs/${ACME.id}`, { success: true })
    answer('POST /auth/orgs/active', { accessToken: jwt({ sub: 'mock:ada', jti: 'j2', sid: 's' }) })
    await orgs.remove(ACME.id)
    expect(calls().slice(2)).toEqual([`DELETE /auth/orgs/${ACME.id}`, 'POST /auth/orgs/active'])
    expect(requests.at(-1)!.body).toEqual({ orgId: null })
    expect(orgs.organizations.value).toEqual([])
    expect(orgs.active.value).toBeNull()
  })

  it('a failed switch after leaving does not undo the leave (the stale token is refreshed on its next use)', async () => {
    logIn({ sub: 'ada', org: ACME.id, orgRole: 'member' })
    const orgs = useOrganizations()
    answer(`DELETE /auth/orgs/${ACME.id}/members/ada`, { success: true })
    answer('POST /auth/orgs/active', refusal(500, 'internal'))
    await expect(orgs.leave(ACME.id)).resolves.toBeUndefined()
  })

  it('leave needs a logged-in user', async () => {
    await expect(useOrganizations().leave(ACME.id)).rejects.toThrow(/Log in/)
    expect(requests).toEqual([])
  })
})

describe('useOrganizations: refusals and stale tokens', () => {
  it('a 401 (session_stale) refreshes once and retries once with the new token', async () => {
    const old = logIn({ sub: 'ada', org: ACME.id, orgRole: 'admin' })
    const fresh = jwt({ sub: 'ada', org: ACME.id, orgRole: 'member', jti: 'j2', sid: 's' })
    const orgs = useOrganizations()
    answer(`GET /auth/orgs/${ACME.id}/members`, refusal(401, 'session_stale'), { members: [] })
    answer('POST /auth/refresh', { accessToken: fresh })
    expect(await orgs.members(ACME.id)).toEqual([])
    expect(requests.map(r => [r.method, r.url, r.authorization])).toEqual([
      ['GET', `/auth/orgs/${ACME.id}/members`, `Bearer ${old}`],
      ['POST', '/auth/refresh', null],
      ['GET', `/auth/orgs/${ACME.id}/members`, `Bearer ${fresh}`],
    ])
    // The refreshed claims are the app's at once.
    expect(orgs.active.value).toEqual({ id: ACME.id, role: 'member' })
  })

  it('a second 401 reaches the caller; a failed refresh rejects with the first 401, without a retry', async () => {
    logIn({ sub: 'ada' })
    const orgs = useOrganizations()
    answer('GET /auth/orgs', refusal(401, 'session_stale'), refusal(401, 'session_stale'))
    answer('POST /auth/refresh', { accessToken: jwt({ sub: 'ada' }) })
    await expect(orgs.refresh()).rejects.toMatchObject({ data: { error: 'session_stale' } })
    expect(calls()).toEqual(['GET /auth/orgs', 'POST /auth/refresh', 'GET /auth/orgs'])

    requests = []
    answer('GET /auth/orgs', refusal(401, 'unauthorized'))
    answer('POST /auth/refresh', refusal(401, 'invalid_refresh_token'))
    await expect(orgs.refresh()).rejects.toMatchObject({ data: { error: 'unauthorized' } })
    expect(calls()).toEqual(['GET /auth/orgs', 'POST /auth/refresh'])
  })

  it('other refusals reach the caller as FetchErrors with the module\'s code, without a refresh', async () => {
    logIn({ sub: 'ada' })
    const orgs = useOrganizations()
    answer(`PATCH /auth/orgs/${ACME.id}/members/una`, refusal(409, 'last_owner', 'An organization must keep at least one owner'))
    const error = await orgs.updateMember(ACME.id, 'una', 'member').catch((e: unknown) => e)
    expect(orgs.errorOf(error)).toEqual({ error: 'last_owner', message: 'An organization must keep at least one owner' })
    answer('POST /auth/orgs', refusal(409, 'slug_taken'))
    await expect(orgs.create({ name: 'Acme', slug: 'acme' })).rejects.toMatchObject({ data: { error: 'slug_taken' } })
    answer(`GET /auth/orgs/${BETA.id}`, refusal(404, 'not_found'))
    await expect(orgs.get(BETA.id)).rejects.toMatchObject({ status: 404 })
    expect(calls()).not.toContain('POST /auth/refresh')
    expect(orgs.organizations.value).toEqual([])
    expect(orgs.errorOf(new TypeError('fetch failed')).error).toBe('network_error')
  })
})

describe('useOrganizations: members, invitations and teams', () => {
  it('members, role changes and removals, with ids encoded in the path', async () => {
    logIn({ sub: 'ada' })
    const orgs = useOrganizations()
    const una = { userId: 'mock:una', email: 'una@example.com', name: 'Una', role: 'member', teams: [] }
    answer(`GET /auth/orgs/${ACME.id}/members`, { members: [una] })
    expect(await orgs.members(ACME.id)).toEqual([una])
    answer(`PATCH /auth/orgs/${ACME.id}/members/mock%3Auna`, { member: { ...una, role: 'admin' } })
    expect(await orgs.updateMember(ACME.id, 'mock:una', 'admin')).toMatchObject({ role: 'admin' })
    expect(requests.at(-1)!.body).toEqual({ role: 'admin' })
    answer(`DELETE /auth/orgs/${ACME.id}/members/mock%3Auna`, { success: true })
    await orgs.removeMember(ACME.id, 'mock:una')
    // An id cannot climb out of its segment.
    answer('DELETE /auth/orgs/..%2Fx/members/a%2F..%2F..', { success: true })
    await orgs.removeMember('../x', 'a/../..')
    expect(calls()).toEqual([
      `GET /auth/orgs/${ACME.id}/members`,
      `PATCH /auth/orgs/${ACME.id}/members/mock%3Auna`,
      `DELETE /auth/orgs/${ACME.id}/members/mock%3Auna`,
      'DELETE /auth/orgs/..%2Fx/members/a%2F..%2F..',
    ])
  })

  it('invite, list and revoke invitations', async () => {
    logIn({ sub: 'ada' })
    const orgs = useOrganizations()
    const sent = { id: 'inv_1', email: 'new@example.com', role: 'member', expiresAt: '2026-01-08T00:00:00.000Z' }
    answer(`POST /auth/orgs/${ACME.id}/invitations`, { invitation: sent })
    expect(await orgs.invite(ACME.id, { email: 'new@example.com', role: 'member', teamId: 'team_1' })).toEqual(sent)
    expect(requests.at(-1)!.body).toEqual({ email: 'new@example.com', role: 'member', teamId: 'team_1' })
    answer(`GET /auth/orgs/${ACME.id}/invitations`, { invitations: [{ ...sent, invitedBy: 'ada', createdAt: '2026-01-01T00:00:00.000Z' }] })
    expect(await orgs.invitations(ACME.id)).toHaveLength(1)
    answer(`DELETE /auth/orgs/${ACME.id}/invitations/inv_1`, { success: true })
    await orgs.revokeInvitation(ACME.id, 'inv_1')
    expect(calls().at(-1)).toBe(`DELETE /auth/orgs/${ACME.id}/invitations/inv_1`)
  })

  it('accept sends the access token and no invitation token (the cookie carries it), or the token given; adds the organization', async () => {
    const token = logIn({ sub: 'una' })
    const orgs = useOrganizations()
    answer('POST /auth/invitations/accept', { organization: ACME, role: 'member' }, { organization: BETA, role: 'admin' })
    expect(await orgs.accept()).toEqual({ organization: ACME, role: 'member' })
    expect(requests[0]).toMatchObject({ url: '/auth/invitations/accept', method: 'POST', body: {}, authorization: `Bearer ${token}` })
    await orgs.accept('tok-123')
    expect(requests[1]!.body).toEqual({ token: 'tok-123' })
    expect(orgs.organizations.value.map(o => [o.id, o.role])).toEqual([[ACME.id, 'member'], [BETA.id, 'admin']])
  })

  it('lookupInvitation needs no login: no access token, the cookie with the request', async () => {
    logIn({ sub: 'una' })
    const preview = { organization: { id: ACME.id, name: 'Acme', slug: 'acme' }, email: 'una@example.com', role: 'member', expiresAt: '2026-01-08T00:00:00.000Z' }
    answer('POST /auth/invitations/lookup', preview, preview)
    expect(await useOrganizations().lookupInvitation()).toEqual(preview)
    expect(requests[0]).toMatchObject({ body: {}, authorization: null, credentials: 'include' })
    await useOrganizations().lookupInvitation('tok-1')
    expect(requests[1]!.body).toEqual({ token: 'tok-1' })
  })

  it('an answer that is not the route\'s (an HTML page of a missing route) rejects instead of reaching the page', async () => {
    logIn({ sub: 'una' })
    const orgs = useOrganizations()
    answer('POST /auth/invitations/lookup', '<!DOCTYPE html><html></html>')
    await expect(orgs.lookupInvitation()).rejects.toThrow(/no invitation/)
    answer('POST /auth/invitations/accept', '<!DOCTYPE html><html></html>')
    await expect(orgs.accept()).rejects.toThrow(/no organization/)
    answer('POST /auth/orgs', { success: true })
    await expect(orgs.create({ name: 'Acme' })).rejects.toThrow(/no organization/)
    expect(orgs.organizations.value).toEqual([])
    // The page shows a refusal instead of rendering what is not there.
    answer('POST /auth/invitations/lookup', '<!DOCTYPE html><html></html>')
    fakeApp()
    const page = useInvitationPage()
    await page.start()
    expect(page.view.value).toMatchObject({ step: 'failed', error: 'network_error' })
  })

  it('teams: list, create, delete, set and remove a team member', async () => {
    logIn({ sub: 'ada' })
    const orgs = useOrganizations()
    const team = { id: 'team_a', name: 'Core', createdAt: '2026-01-01T00:00:00.000Z' }
    answer(`POST /auth/orgs/${ACME.id}/teams`, { team })
    expect(await orgs.createTeam(ACME.id, 'Core')).toEqual(team)
    expect(requests.at(-1)!.body).toEqual({ name: 'Core' })
    answer(`GET /auth/orgs/${ACME.id}/teams`, { teams: [team] })
    expect(await orgs.teams(ACME.id)).toEqual([team])
    const member = { userId: 'una', role: 'member', teams: [{ id: 'team_a', name: 'Core', role: 'lead' }] }
    answer(`PUT /auth/orgs/${ACME.id}/teams/team_a/members/una`, { member })
    expect(await orgs.setTeamMember(ACME.id, 'team_a', 'una', 'lead')).toEqual(member)
    expect(requests.at(-1)!.body).toEqual({ role: 'lead' })
    answer(`DELETE /auth/orgs/${ACME.id}/teams/team_a/members/una`, { success: true })
    await orgs.removeTeamMember(ACME.id, 'team_a', 'una')
    answer(`DELETE /auth/orgs/${ACME.id}/teams/team_a`, { success: true })
    await orgs.deleteTeam(ACME.id, 'team_a')
    expect(calls().slice(-2)).toEqual([`DELETE /auth/orgs/${ACME.id}/teams/team_a/members/una`, `DELETE /auth/orgs/${ACME.id}/teams/team_a`])
  })

  it('follows endpoints.authPath', async () => {
    fakeApp({ endpoints: { authPath: '/api/auth/' } } as ModuleOptionsInput)
    logIn({ sub: 'ada' })
    answer('GET /api/auth/orgs', { organizations: [] })
    answer('POST /api/auth/invitations/lookup', PREVIEW)
    await useOrganizations().refresh()
    await useOrganizations().lookupInvitation()
    expect(calls()).toEqual(['GET /api/auth/orgs', 'POST /api/auth/invitations/lookup'])
  })
})

describe('the invitation page\'s flow', () => {
  function deps(over: Partial<InvitationPageDeps> = {}) {
    const log: string[] = []
    const d: InvitationPageDeps = {
      loggedIn: async () => false,
      accept: async () => {
        log.push('accept')
        return { organization: ACME, role: 'member' }
      },
      lookup: async () => {
        log.push('lookup')
        return PREVIEW
      },
      go: async (path) => {
        log.push(`go ${path}`)
      },
      errorOf: error => useOrganizations().errorOf(error),
      redirectAfterAccept: '/orgs',
      loginUrl: '/login?redirect=%2Fauth%2Finvitation',
      ...over,
    }
    return { d, log }
  }

  it('logged out: looks the invitation up and offers login and registration, both coming back', async () => {
    const { d, log } = deps()
    const shown: string[] = []
    const view = await openInvitation(d, v => shown.push(v.step))
    expect(view).toEqual({ step: 'invited', invitation: PREVIEW, loginUrl: '/login?redirect=%2Fauth%2Finvitation', registerUrl: '/login?redirect=%2Fauth%2Finvitation&mode=register' })
    expect(log).toEqual(['lookup'])
    expect(shown).toEqual(['invited'])
  })

  it('logged in: accepts, then goes to redirectAfterAccept', async () => {
    const { d, log } = deps({ loggedIn: async () => true })
    const shown: string[] = []
    expect(await openInvitation(d, v => shown.push(v.step))).toEqual({ step: 'accepted', organization: ACME, role: 'member' })
    expect(log).toEqual(['accept', 'go /orgs'])
    expect(shown[0]).toBe('accepting')
    expect(shown.at(-1)).toBe('accepted')
  })

  it('an ?error= of the link is shown plainly, with no request', async () => {
    const { d, log } = deps({ queryError: 'invitation_invalid', loggedIn: async () => true })
    expect(await openInvitation(d)).toEqual({ step: 'failed', error: 'invitation_invalid', message: '', key: INVITATION_MESSAGES.invitation_invalid })
    expect(log).toEqual([])
    const unknown = await openInvitation(deps({ queryError: 'something_else' }).d)
    expect(unknown).toMatchObject({ step: 'failed', error: 'something_else', key: 'invitation_unusable' })
  })

  it('refusals in plain words: a wrong address shows which one is invited; already a member offers to go on', async () => {
    const mismatch = deps({ loggedIn: async () => true, accept: async () => Promise.reject(refusal(403, 'invitation_email_mismatch', 'server words')) })
    expect(await openInvitation(mismatch.d)).toEqual({ step: 'failed', error: 'invitation_email_mismatch', message: expect.any(String), key: INVITATION_MESSAGES.invitation_email_mismatch, invitation: PREVIEW })
    expect(mismatch.log).toEqual(['lookup'])

    const member = deps({ loggedIn: async () => true, accept: async () => Promise.reject(refusal(409, 'already_member')) })
    expect(await openInvitation(member.d)).toEqual({ step: 'failed', error: 'already_member', message: expect.any(String), key: INVITATION_MESSAGES.already_member, continueTo: '/orgs' })
    expect(member.log).toEqual([])

    const gone = deps({ lookup: async () => Promise.reject(refusal(400, 'invitation_invalid')) })
    expect(await openInvitation(gone.d)).toMatchObject({ step: 'failed', error: 'invitation_invalid', message: expect.any(String), key: INVITATION_MESSAGES.invitation_invalid })

    const other = deps({ loggedIn: async () => true, accept: async () => Promise.reject(refusal(429, 'rate_limited', 'Too many requests')) })
    expect(await openInvitation(other.d)).toEqual({ step: 'failed', error: 'rate_limited', message: 'Too many requests' })
    // A mismatch whose lookup fails too still says what went wrong.
    const both = deps({ loggedIn: async () => true, accept: async () => Promise.reject(refusal(403, 'invitation_email_mismatch')), lookup: async () => Promise.reject(refusal(400, 'invitation_invalid')) })
    expect(await openInvitation(both.d)).toEqual({ step: 'failed', error: 'invitation_email_mismatch', message: expect.any(String), key: INVITATION_MESSAGES.invitation_email_mismatch })
  })
})

describe('the invitation page in the app', () => {
  it('logged in: accepts with the access token and the cookie, then goes to organizations.redirectAfterAccept', async () => {
    fakeApp({ organizations: { redirectAfterAccept: '/orgs' } })
    const token = logIn({ sub: 'una', email: 'una@example.com' })
    answer('POST /auth/invitations/accept', { organization: ACME, role: 'member' })
    const page = useInvitationPage()
    expect(page.view.value).toEqual({ step: 'checking' })
    await page.start()
    expect(requests).toEqual([expect.objectContaining({ url: '/auth/invitations/accept', body: {}, authorization: `Bearer ${token}` })])
    expect(env.navigations).toEqual([{ path: '/orgs', options: { replace: true } }])
    expect(page.view.value).toMatchObject({ step: 'accepted', role: 'member' })
  })

  it('logged out: shows the invitation; login and registration lead to the login page and back here', async () => {
    answer('POST /auth/invitations/lookup', PREVIEW)
    env.route = { path: '/auth/invitation', fullPath: '/auth/invitation', query: {} }
    const page = useInvitationPage()
    await page.start()
    expect(requests).toEqual([expect.objectContaining({ url: '/auth/invitations/lookup', authorization: null })])
    expect(page.view.value).toEqual({ step: 'invited', invitation: PREVIEW, loginUrl: '/login?redirect=%2Fauth%2Finvitation', registerUrl: '/login?redirect=%2Fauth%2Finvitation&mode=register' })
    expect(env.navigations).toEqual([])
  })

  it('the link\'s ?error=invitation_invalid is shown without a request', async () => {
    env.route = { path: '/auth/invitation', fullPath: '/auth/invitation?error=invitation_invalid', query: { error: 'invitation_invalid' } }
    const page = useInvitationPage()
    await page.start()
    expect(requests).toEqual([])
    expect(page.view.value).toMatchObject({ step: 'failed', error: 'invitation_invalid' })
    env.route = { path: '/auth/invitation', fullPath: '/auth/invitation', query: {} }
  })
})

describe('the organizations client build step', () => {
  it('off: no composable, no page, nothing in the public config', () => {
    setupOrganizationsClient(buildStepContext({}))
    expect(kit.addImports).not.toHaveBeenCalled()
    expect(kit.extendPages).not.toHaveBeenCalled()
    expect(toPublicConfig(resolveOptions({}, true))).not.toHaveProperty('organizations')
  })

  it('on: useOrganizations and the invitation page at invitationPath; the public config has its paths with the defaults', () => {
    setupOrganizationsClient(buildStepContext({ organizations: {} }))
    expect(kit.addImports).toHaveBeenCalledWith([{ name: 'useOrganizations', from: '/module/runtime/organizations/app/useOrganizations' }])
    expect(pagesAfter(kit.extendPages, [])).toEqual([{ name: 'svc-auth-invitation', path: '/auth/invitation', file: '/module/runtime/organizations/app/invitation.vue' }])
    expect(toPublicConfig(resolveOptions({ organizations: {} }, true)).organizations).toEqual({ invitationPath: '/auth/invitation', redirectAfterAccept: '/', roles: DEFAULT_ROLES })
    // The role table goes to the browser (useAuth().can(), the page guard); nothing else of the options does.
    const published = toPublicConfig(resolveOptions({ organizations: { roles: { owner: ['*'], viewer: ['x:y'] }, creatorRole: 'owner', defaultRole: 'viewer', maxNameLength: 77, invitationsPerInviter: 7 } }, true))
    expect(published.organizations).toEqual({ invitationPath: '/auth/invitation', redirectAfterAccept: '/', roles: { owner: ['*'], viewer: ['x:y'] } })
  })

  it('a chosen path, an app page there wins, and an app without pages gets none', () => {
    setupOrganizationsClient(buildStepContext({ organizations: { invitationPath: '/join', redirectAfterAccept: '/teams' } }))
    expect(pagesAfter(kit.extendPages, []).map(p => p.path)).toEqual(['/join'])
    expect(pagesAfter(kit.extendPages, [{ path: '/join', file: '/app/join.vue' }])).toEqual([{ path: '/join', file: '/app/join.vue' }])
    expect(toPublicConfig(resolveOptions({ organizations: { invitationPath: '/join', redirectAfterAccept: '/teams' } }, true)).organizations).toEqual({ invitationPath: '/join', redirectAfterAccept: '/teams', roles: DEFAULT_ROLES })
    vi.clearAllMocks()
    setupOrganizationsClient(buildStepContext({ organizations: {} }, { pages: false }))
    expect(kit.addImports).toHaveBeenCalled()
    expect(kit.extendPages).not.toHaveBeenCalled()
  })
})
