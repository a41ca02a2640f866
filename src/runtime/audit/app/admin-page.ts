/** What the admin page does (admin.vue shows it): find a user, show their sessions and audit trail, end a session, impersonate. */
import { reactive } from 'vue'
import { createError, showError, useNuxtApp, useRoute } from '#imports'
import { underPath, withQuery } from '../../shared/paths'
import { getAuthFetch, useAuth } from '../../app/auth-client'
import { statusOf } from '../../app/lib/auth-fetch'
import { authErrorOf, ensureSession, goTo, inApp, loginRedirect, publicAuthConfig, refreshSession, sessionState, tokenState } from '../../app/state'
import type { AuditEvent } from '../audit-types'
import type { AuditAdminSession, AuditAdminUser } from '../admin-types'
import { usePageTexts, type PageText } from '../../app/lib/use-page-texts'
import { ACCESS_TEXTS, ADMIN_TEXTS } from '../../shared/page-texts'

/** Audit events shown at once (and per "More events"). */
export const TRAIL_PAGE = 50

/** What the page shows; `ready` once the server said the user may use it. */
export interface AdminView {
  ready: boolean
  query: string
  /** The users of the last search (null: none yet). */
  users: AuditAdminUser[] | null
  /** The user shown, with their sessions and audit trail (null: not loaded yet). */
  user: AuditAdminUser | null
  sessions: AuditAdminSession[] | null
  events: AuditEvent[] | null
  /** Where the trail goes on (none: its end). */
  cursor?: string
  busy: boolean
  /** The outcome of the last action, for `role="status"`. */
  status: string
  /** The refusal of the last action, for `role="alert"`. */
  error: string
}

/** What the page's actions need: the calls, the session and where to go. */
export interface AdminPageDeps {
  /** A JSON call of a module endpoint with the user's access token. */
  call<T>(path: string, method?: 'GET' | 'DELETE'): Promise<T>
  /** Resolves once the session is known: true when logged in. */
  loggedIn(): Promise<boolean>
  impersonate(userId: string, reason: string): Promise<void>
  go(path: string): Promise<void>
  /** Shows the 403 error page. */
  deny(): void
  authPath: string
  /** The login page, coming back here. */
  loginUrl: string
  /** Where an administrator goes once acting as the user. */
  afterImpersonation: string
  /** The page's texts in the app's locale. */
  text: PageText<keyof typeof ADMIN_TEXTS>
}

/** Codes that mean the user may not use the page at all: the 403 error page. */
const DENIED = new Set(['permission_denied', 'impersonated_session'])

/** The page's actions over `view` (call `start` once, in the browser). */
export function adminPageActions(deps: AdminPageDeps, view: AdminView) {
  const users = (q: string) => withQuery(underPath(deps.authPath, 'audit', 'users'), { q })
  const sessionsOf = (id: string) => underPath(deps.authPath, 'audit', 'users', encodeURIComponent(id), 'sessions')
  const trailOf = (id: string, cursor?: string) => deps.call<{ events: AuditEvent[], cursor?: string }>(withQuery(underPath(deps.authPath, 'audit'), { user: id, limit: String(TRAIL_PAGE), cursor }))

  /** Runs an action: a refusal of the page goes to the 403 page, a lost session to the login, others are shown. */
  async function run(action: () => Promise<void>): Promise<void> {
    view.busy = true
    view.error = ''
    try {
      await action()
    }
    catch (error) {
      const refusal = authErrorOf(error)
      if (DENIED.has(refusal.error)) deps.deny()
      else if (statusOf(error) === 401) await deps.go(deps.loginUrl)
      else view.error = refusal.message
    }
    finally {
      view.busy = false
    }
  }

  /** Shows `user` with their sessions and trail; either shows without the other when one call fails. */
  async function load(user: AuditAdminUser): Promise<void> {
    view.user = user
    view.sessions = null
    view.events = null
    view.cursor = undefined
    const [sessions, trail] = await Promise.allSettled([deps.call<{ sessions: AuditAdminSession[] }>(sessionsOf(user.id)), trailOf(user.id)])
    if (sessions.status === 'fulfilled') view.sessions = sessions.value.sessions
    if (trail.status === 'fulfilled') {
      view.events = trail.value.events
      view.cursor = trail.value.cursor
    }
    for (const result of [sessions, trail]) if (result.status === 'rejected') throw result.reason
  }

  return {
    /** Logged out: to the login page. Else asks the server whether the user may use the page (403: the error page). */
    async start(): Promise<void> {
      if (!(await deps.loggedIn())) return deps.go(deps.loginUrl)
      await run(async () => {
        await deps.call(users(''))
        view.ready = true
      })
    },
    /** Finds users by email or id; one found is shown at once. */
    search: () => run(async () => {
      const q = view.query.trim()
      if (!q) return
      const found = (await deps.call<{ users: AuditAdminUser[] }>(users(q))).users
      view.users = found
      view.user = null
      view.status = found.length > 1 ? deps.text('admin_found_many', { count: found.length }) : deps.text(found.length ? 'admin_found_one' : 'admin_found_none')
      if (found.length === 1) await load(found[0]!)
    }),
    show: (user: AuditAdminUser) => run(() => load(user)),
    /** The next page of the trail. */
    more: () => run(async () => {
      if (!view.user || !view.cursor) return
      const trail = await trailOf(view.user.id, view.cursor)
      view.events = [...(view.events ?? []), ...trail.events]
      view.cursor = trail.cursor
    }),
    /** Ends a session of the user shown, then shows their sessions and trail again. */
    revoke: (sessionId: string) => run(async () => {
      const user = view.user
      if (!user) return
      await deps.call(`${sessionsOf(user.id)}/${encodeURIComponent(sessionId)}`, 'DELETE')
      view.status = deps.text('admin_session_ended', { id: sessionId })
      await load(user)
    }),
    /** Acts as the user shown (`useAuth().impersonate`), then leaves the page, which the impersonated session may not use. */
    impersonate: (reason: string) => run(async () => {
      if (!view.user) return
      await deps.impersonate(view.user.id, reason)
      await deps.go(deps.afterImpersonation)
    }),
  }
}

/** The page's state and actions in the app. */
export function useAdminPage() {
  const nuxtApp = useNuxtApp()
  const route = inApp(nuxtApp, () => useRoute())
  const config = publicAuthConfig(nuxtApp)
  const auth = useAuth()
  const access = usePageTexts(ACCESS_TEXTS)
  const view = reactive<AdminView>({ ready: false, query: '', users: null, user: null, sessions: null, events: null, busy: false, status: '', error: '' })
  const send = <T>(path: string, method: 'GET' | 'DELETE') => getAuthFetch(nuxtApp)<T>(path, { method }) as Promise<T>
  const deps: AdminPageDeps = {
    // The module's endpoints are not refreshed on a 401 by the fetch helper: once here, then the login.
    async call<T>(path: string, method: 'GET' | 'DELETE' = 'GET') {
      try {
        return await send<T>(path, method)
      }
      catch (error) {
        if (statusOf(error) !== 401 || !(await refreshSession(nuxtApp)).token) throw error
        return send<T>(path, method)
      }
    },
    loggedIn: async () => {
      await ensureSession(nuxtApp)
      return !!sessionState(nuxtApp).value.user || !!tokenState(nuxtApp).value
    },
    impersonate: (userId, reason) => auth.impersonate(userId, reason),
    go: async (path) => {
      await goTo(nuxtApp, path)
    },
    deny: () => void nuxtApp.runWithContext(() => showError(createError({ statusCode: 403, statusMessage: access('access_forbidden'), message: access('access_permission_denied'), data: { error: 'permission_denied' } }))),
    authPath: config.endpoints.authPath,
    loginUrl: loginRedirect(config, route.fullPath),
    afterImpersonation: config.redirect.success,
    text: usePageTexts(ADMIN_TEXTS),
  }
  return { view, impersonation: config.auditAdmin?.impersonation === true, ...adminPageActions(deps, view) }
}
