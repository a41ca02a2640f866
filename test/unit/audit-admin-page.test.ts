import { beforeEach, describe, expect, it, vi } from 'vitest'
import { resolveOptions, toPublicConfig } from '../../src/build/resolve-options'
import type { AuditEvent } from '../../src/runtime/audit/audit-types'
import { buildStepContext, pagesAfter } from './helpers/build-steps'
import { ADMIN_TEXTS } from '../../src/runtime/shared/page-texts'
import { renderWith } from '../../src/runtime/shared/text'

// The admin page's build step (nothing of it without `audit.adminPage`) and what the page does, against fake calls.
const kit = vi.hoisted(() => ({ addServerHandler: vi.fn(), addServerImports: vi.fn(), extendPages: vi.fn() }))
vi.mock('@nuxt/kit', () => kit)
vi.mock('#imports', () => ({}))
vi.mock('#build/svc-auth/client-features.mjs', () => ({ passkey: undefined, organizations: undefined }))
vi.mock('#build/svc-auth/page-texts.mjs', () => ({ default: {} }))

const { setupAudit, setupAuditAdmin } = await import('../../src/build/audit')
const { moduleRoutePaths } = await import('../../src/build/module-routes')
const { adminPageActions, TRAIL_PAGE } = await import('../../src/runtime/audit/app/admin-page')
type AdminView = import('../../src/runtime/audit/app/admin-page').AdminView
type AdminPageDeps = import('../../src/runtime/audit/app/admin-page').AdminPageDeps

const handlers = () => kit.addServerHandler.mock.calls.map(([h]) => `${(h as { method: string }).method} ${(h as { route: string }).route}`)

beforeEach(() => {
  vi.clearAllMocks()
})

describe('the admin page\'s build step', () => {
  it('audit off, or on without adminPage: no page, no endpoints, nothing in the public config', () => {
    for (const input of [{}, { audit: {} }, { audit: { adminPage: false as const } }]) {
      const ctx = buildStepContext(input)
      setupAuditAdmin(ctx)
      expect(kit.extendPages).not.toHaveBeenCalled()
      expect(kit.addServerHandler).not.toHaveBeenCalled()
      expect(toPublicConfig(resolveOptions(input, true))).not.toHaveProperty('auditAdmin')
      expect(moduleRoutePaths(ctx.options).filter(path => path.startsWith('/auth/audit/users'))).toEqual([])
    }
  })

  it('with adminPage: the page at its path and its three endpoints; whether impersonation is on reaches the browser', () => {
    const input = { audit: { adminPage: '/admin/security' }, impersonation: { enabled: true } }
    const ctx = buildStepContext(input)
    setupAuditAdmin(ctx)
    expect(pagesAfter(kit.extendPages, [])).toEqual([{ name: 'svc-auth-audit-admin', path: '/admin/security', file: '/module/runtime/audit/app/admin.vue' }])
    expect(handlers()).toEqual(['get /auth/audit/users', 'get /auth/audit/users/:userId/sessions', 'delete /auth/audit/users/:userId/sessions/:sessionId'])
    expect(kit.addServerHandler.mock.calls.map(([h]) => (h as { handler: string }).handler)).toEqual([
      '/module/runtime/audit/server/routes/admin-users.get',
      '/module/runtime/audit/server/routes/admin-sessions.get',
      '/module/runtime/audit/server/routes/admin-session.delete',
    ])
    expect(toPublicConfig(resolveOptions(input, true)).auditAdmin).toEqual({ impersonation: true })
    expect(toPublicConfig(resolveOptions({ audit: { adminPage: '/ops' } }, true)).auditAdmin).toEqual({ impersonation: false })
    expect(moduleRoutePaths(ctx.options)).toEqual(expect.arrayContaining(['/auth/audit/users', '/auth/audit/users/:userId/sessions/:sessionId']))
  })

  it('an app page at the path wins; an app without pages gets the endpoints only', () => {
    setupAuditAdmin(buildStepContext({ audit: { adminPage: '/ops' } }))
    expect(pagesAfter(kit.extendPages, [{ path: '/ops', file: '/app/ops.vue' }])).toEqual([{ path: '/ops', file: '/app/ops.vue' }])
    vi.clearAllMocks()
    setupAuditAdmin(buildStepContext({ audit: { adminPage: '/ops' } }, { pages: false }))
    expect(kit.extendPages).not.toHaveBeenCalled()
    expect(handlers()).toHaveLength(3)
  })

  it('the audit build step sets the admin page up, and refuses an adminPage that is no path', () => {
    setupAudit(buildStepContext({ audit: { adminPage: '/ops' } }))
    expect(pagesAfter(kit.extendPages, []).map(p => p.path)).toEqual(['/ops'])
    expect(() => setupAudit(buildStepContext({ audit: { adminPage: 'admin' } }))).toThrow(/svcAuth\.audit\.adminPage/)
  })
})

/** An error as ofetch throws it for an error answer of the module. */
function refusal(status: number, error: string, message = error) {
  return Object.assign(new Error(message), { status, data: { statusCode: status, error, message } })
}

const event = (n: number): AuditEvent => ({ id: `evt_${n}`, at: new Date(n * 1000).toISOString(), type: 'session.revoked', outcome: 'success', actor: 'admin', subject: 'u1', client: { family: null, addressPrefix: null }, details: {} })

/** The page's actions over fake calls: `answers` by `METHOD path`, each a value or an error (the last one repeats). */
function page(answers: Record<string, unknown[]>, over: Partial<AdminPageDeps> = {}) {
  const calls: string[] = []
  const went: string[] = []
  const denied: number[] = []
  const view: AdminView = { ready: false, query: '', users: null, user: null, sessions: null, events: null, busy: false, status: '', error: '' }
  const deps: AdminPageDeps = {
    async call<T>(path: string, method = 'GET') {
      const key = `${method} ${path}`
      calls.push(key)
      const list = answers[key]
      if (!list) throw refusal(404, 'not_found')
      const next = list.length > 1 ? list.shift() : list[0]
      if (next instanceof Error) throw next
      return next as T
    },
    loggedIn: async () => true,
    text: (key, params) => renderWith({ key, params }, found => ADMIN_TEXTS[found]),
    impersonate: async () => {},
    go: async (path) => {
      went.push(path)
    },
    deny: () => void denied.push(403),
    authPath: '/auth',
    loginUrl: '/login?redirect=%2Fadmin%2Fsecurity',
    afterImpersonation: '/home',
    ...over,
  }
  return { view, calls, went, denied, actions: adminPageActions(deps, view) }
}

const u1 = { id: 'u1', email: 'u1@example.com', sessions: 1 }
const session = { id: 's1', current: false, createdAt: '2026-01-01T00:00:00.000Z', lastUsedAt: '2026-01-01T00:00:00.000Z', client: {} }
const trail = (cursor?: string) => `GET /auth/audit?user=u1&limit=${TRAIL_PAGE}${cursor ? `&cursor=${cursor}` : ''}`

describe('the admin page', () => {
  it('a logged-out visitor goes to the login page, coming back here; nothing is asked of the server', async () => {
    const p = page({}, { loggedIn: async () => false })
    await p.actions.start()
    expect(p.went).toEqual(['/login?redirect=%2Fadmin%2Fsecurity'])
    expect(p.calls).toEqual([])
  })

  it('a user the server refuses (permission_denied, impersonated_session) gets the 403 page; an expired session the login', async () => {
    for (const code of ['permission_denied', 'impersonated_session']) {
      const p = page({ 'GET /auth/audit/users?q=': [refusal(403, code)] })
      await p.actions.start()
      expect(p.denied).toEqual([403])
      expect(p.view.ready).toBe(false)
    }
    const p = page({ 'GET /auth/audit/users?q=': [refusal(401, 'session_revoked')] })
    await p.actions.start()
    expect(p.went).toEqual(['/login?redirect=%2Fadmin%2Fsecurity'])
  })

  it('an administrator searches: one user found is shown with their sessions and trail; "More events" follows the cursor', async () => {
    const p = page({
      'GET /auth/audit/users?q=': [{ users: [] }],
      'GET /auth/audit/users?q=u1%40example.com': [{ users: [u1] }],
      'GET /auth/audit/users/u1/sessions': [{ sessions: [session] }],
      [trail()]: [{ events: [event(2)], cursor: 'c1' }],
      [trail('c1')]: [{ events: [event(1)] }],
    })
    await p.actions.start()
    expect(p.view.ready).toBe(true)
    p.view.query = ' u1@example.com '
    await p.actions.search()
    expect(p.view).toMatchObject({ users: [u1], user: u1, sessions: [session], events: [event(2)], cursor: 'c1', status: '1 user found.', error: '', busy: false })
    await p.actions.more()
    expect(p.view.events!.map(e => e.id)).toEqual(['evt_2', 'evt_1'])
    expect(p.view.cursor).toBeUndefined()
  })

  it('several users found: none is shown until picked; none found says so', async () => {
    const u2 = { id: 'u1@example.com', sessions: 2 }
    const p = page({ 'GET /auth/audit/users?q=u1%40example.com': [{ users: [u1, u2] }], 'GET /auth/audit/users?q=zed': [{ users: [] }], 'GET /auth/audit/users/u1%40example.com/sessions': [{ sessions: [] }], 'GET /auth/audit?user=u1%40example.com&limit=50': [{ events: [] }] })
    p.view.query = 'u1@example.com'
    await p.actions.search()
    expect(p.view).toMatchObject({ users: [u1, u2], user: null, status: '2 users found.' })
    await p.actions.show(u2)
    expect(p.view).toMatchObject({ user: u2, sessions: [], events: [] })
    p.view.query = 'zed'
    await p.actions.search()
    expect(p.view).toMatchObject({ users: [], user: null, status: 'No user found.' })
  })

  it('ending a session: DELETE, then the sessions and the trail again; a refusal is shown, not thrown', async () => {
    const p = page({
      'GET /auth/audit/users?q=u1': [{ users: [u1] }],
      'GET /auth/audit/users/u1/sessions': [{ sessions: [session] }, { sessions: [] }],
      [trail()]: [{ events: [] }, { events: [event(3)] }],
      'DELETE /auth/audit/users/u1/sessions/s1': [{ success: true }, refusal(404, 'not_found', 'No such session')],
    })
    p.view.query = 'u1'
    await p.actions.search()
    await p.actions.revoke('s1')
    expect(p.calls.slice(-3)).toEqual(['DELETE /auth/audit/users/u1/sessions/s1', 'GET /auth/audit/users/u1/sessions', trail()])
    expect(p.view).toMatchObject({ sessions: [], events: [event(3)], status: 'Session s1 ended.' })
    await p.actions.revoke('s1')
    expect(p.view.error).toBe('No such session')
    expect(p.denied).toEqual([])
  })

  it('a trail that cannot be read leaves the sessions shown, with the refusal', async () => {
    const p = page({ 'GET /auth/audit/users?q=u1': [{ users: [u1] }], 'GET /auth/audit/users/u1/sessions': [{ sessions: [session] }], [trail()]: [refusal(500, 'internal_error', 'Internal server error')] })
    p.view.query = 'u1'
    await p.actions.search()
    expect(p.view).toMatchObject({ user: u1, sessions: [session], events: null, error: 'Internal server error', busy: false })
  })

  it('impersonating the user shown: useAuth().impersonate with the reason, then away from the page', async () => {
    const started: string[][] = []
    const p = page({ 'GET /auth/audit/users?q=u1': [{ users: [u1] }], 'GET /auth/audit/users/u1/sessions': [{ sessions: [] }], [trail()]: [{ events: [] }] }, {
      impersonate: async (id, reason) => void started.push([id, reason]),
    })
    p.view.query = 'u1'
    await p.actions.search()
    await p.actions.impersonate('ticket 42')
    expect(started).toEqual([['u1', 'ticket 42']])
    expect(p.went).toEqual(['/home'])
  })
})
