/** What the invitation page does (invitation.vue shows it): accept when logged in, else show the invitation and the way to log in. */
import type { Ref } from 'vue'
import { ref } from 'vue'
import { useNuxtApp, useRoute } from '#imports'
import { withQuery } from '../../shared/paths'
import { ensureSession, goTo, inApp, loginRedirect, publicAuthConfig, sessionState, tokenState } from '../../app/state'
import type { InvitationPreview, OrganizationWithRole } from '../org-answer-types'
import { useOrganizations } from './useOrganizations'
import type { INVITATION_TEXTS } from '../../shared/page-texts'

/** A text of the invitation page. */
type PageKey = keyof typeof INVITATION_TEXTS

/**
 * What the page shows: `checking` before the browser knows the session (also the server's render);
 * `accepting` while a logged-in user accepts; `accepted` on the way to `redirectAfterAccept`; `invited`
 * (logged out) the invitation and where to log in or register, each coming back here; `failed` the
 * code, the page's own text of it (`key`) or the server's message, the invitation when known and where to go on,
 * when there is somewhere.
 */
export type InvitationView = { step: 'checking' } | { step: 'accepting' }
  | { step: 'accepted', organization: OrganizationWithRole['organization'], role: string }
  | { step: 'invited', invitation: InvitationPreview, loginUrl: string, registerUrl: string }
  | { step: 'failed', error: string, message: string, key?: PageKey, invitation?: InvitationPreview, continueTo?: string }

/** What `openInvitation` needs: the session, the two calls, and where to go. */
export interface InvitationPageDeps {
  /** `?error=` of the page (the emailed link's route sets `invitation_invalid`). */
  queryError?: string
  /** Resolves once the session is known: true when logged in. */
  loggedIn(): Promise<boolean>
  /** Accepts the invitation of the cookie as the logged-in user. */
  accept(): Promise<OrganizationWithRole>
  /** What the invitation of the cookie offers. */
  lookup(): Promise<InvitationPreview>
  /** Navigates (replacing the page). */
  go(path: string): Promise<void>
  /** `{ error, message }` of a refused call. */
  errorOf(error: unknown): { error: string, message: string }
  /** `organizations.redirectAfterAccept`. */
  redirectAfterAccept: string
  /** The app's login page with `?redirect=` back to this page. */
  loginUrl: string
}

/** The page's plain words (their keys) for the refusals a visitor can meet; any other code shows the server's message. */
export const INVITATION_MESSAGES: Record<string, PageKey> = {
  invitation_invalid: 'invitation_invalid',
  invitation_email_mismatch: 'invitation_email_mismatch',
  already_member: 'invitation_already_member',
}

/** The query that asks the login page for its registration form (the "Create an account" action). */
export const REGISTER_QUERY = { mode: 'register' } as const

function failed(deps: InvitationPageDeps, error: unknown, more: { invitation?: InvitationPreview, continueTo?: string, key?: PageKey } = {}): InvitationView {
  const refusal = deps.errorOf(error)
  const key = INVITATION_MESSAGES[refusal.error] ?? more.key
  return { step: 'failed', error: refusal.error, message: refusal.message, ...more, ...(key ? { key } : {}) }
}

async function acceptNow(deps: InvitationPageDeps, show: (view: InvitationView) => void): Promise<InvitationView> {
  show({ step: 'accepting' })
  try {
    const { organization, role } = await deps.accept()
    show({ step: 'accepted', organization, role })
    await deps.go(deps.redirectAfterAccept)
    return { step: 'accepted', organization, role }
  }
  catch (error) {
    const code = deps.errorOf(error).error
    if (code === 'already_member') return failed(deps, error, { continueTo: deps.redirectAfterAccept })
    // Show which address the invitation is for (the same lookup a logged-out visitor gets).
    const invitation = code === 'invitation_email_mismatch' ? await deps.lookup().catch(() => undefined) : undefined
    return failed(deps, error, invitation ? { invitation } : {})
  }
}

/**
 * The page's one run: an `?error=` is shown as it is; logged in, the invitation is accepted (the
 * cookie carries its token) and the page goes to `redirectAfterAccept`; logged out, the invitation
 * is shown with a login and a registration link that both come back here.
 */
export async function openInvitation(deps: InvitationPageDeps, show: (view: InvitationView) => void = () => {}): Promise<InvitationView> {
  const done = (view: InvitationView) => {
    show(view)
    return view
  }
  if (deps.queryError) return done(failed(deps, { data: { error: deps.queryError, message: '' } }, { key: 'invitation_unusable' }))
  if (await deps.loggedIn()) return done(await acceptNow(deps, show))
  try {
    const invitation = await deps.lookup()
    return done({ step: 'invited', invitation, loginUrl: deps.loginUrl, registerUrl: withQuery(deps.loginUrl, REGISTER_QUERY) })
  }
  catch (error) {
    return done(failed(deps, error))
  }
}

/** The invitation page's state and its start (call `start` once, in the browser: `onMounted`). */
export function useInvitationPage(): { view: Ref<InvitationView>, start(): Promise<void> } {
  const nuxtApp = useNuxtApp()
  const route = inApp(nuxtApp, () => useRoute())
  const config = publicAuthConfig(nuxtApp)
  const organizations = useOrganizations()
  const view = ref<InvitationView>({ step: 'checking' })
  const queryError = typeof route.query.error === 'string' ? route.query.error : undefined
  const deps: InvitationPageDeps = {
    queryError,
    loggedIn: async () => {
      await ensureSession(nuxtApp)
      return !!sessionState(nuxtApp).value.user || !!tokenState(nuxtApp).value
    },
    accept: () => organizations.accept(),
    lookup: () => organizations.lookupInvitation(),
    go: async (path) => {
      await goTo(nuxtApp, path, { replace: true })
    },
    errorOf: organizations.errorOf,
    redirectAfterAccept: config.organizations?.redirectAfterAccept ?? '/',
    // Back to this page without its query: the cookie, not the URL, carries the invitation.
    loginUrl: loginRedirect(config, route.path),
  }
  return {
    view,
    start: async () => {
      await openInvitation(deps, (next) => {
        view.value = next
      })
    },
  }
}
