/** `useOrganizations()`: in a module of its own so it never reaches the entry chunk with `useAuth`. */
import type { Ref } from 'vue'
import { computed } from 'vue'
import { useNuxtApp, useState } from '#imports'
import { underPath } from '../../shared/paths'
import { getAuthFetch } from '../../app/auth-client'
import { authErrorOf, inApp, postAuth, publicAuthConfig, sessionState, setAccessToken, tokenOf, type AuthSessionState } from '../../app/state'
import type { InvitationPreview, MemberInfo, Organization, OrganizationInvitation, OrganizationSummary, OrganizationWithRole, Team, TeamSummary } from '../org-answer-types'
import type { ActiveOrganization, UseOrganizationsReturn } from './organizations-client-types'

export type { ActiveOrganization, UseOrganizationsReturn } from './organizations-client-types'
export type * from '../org-answer-types'

/** Key of the user's organizations (`useState`). */
export const ORGANIZATIONS_STATE = 'svc-auth:organizations'

/** The list as loaded, and whether it has been. */
export interface OrganizationsState {
  list: OrganizationSummary[]
  loaded: boolean
}

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'

/** The list entry of an organization and the user's role in it. */
function summaryOf({ organization, role }: OrganizationWithRole): OrganizationSummary {
  return { id: organization.id, name: organization.name, slug: organization.slug, role }
}

const listOf = <T>(value: unknown): T[] => (Array.isArray(value) ? value as T[] : [])

/** An answer that names an organization and a role (else an error: not the module's route answered). */
function withRoleOf(answer: unknown): OrganizationWithRole {
  const { organization, role } = (answer ?? {}) as Partial<OrganizationWithRole>
  if (typeof organization?.id !== 'string' || typeof organization.name !== 'string' || typeof role !== 'string') throw new Error('The answer holds no organization')
  return answer as OrganizationWithRole
}

/** An answer that describes an invitation (else an error, as above). */
function invitationOf(answer: unknown): InvitationPreview {
  const { organization, email, role } = (answer ?? {}) as Partial<InvitationPreview>
  if (typeof organization?.name !== 'string' || typeof email !== 'string' || typeof role !== 'string') throw new Error('The answer holds no invitation')
  return answer as InvitationPreview
}

/** A string claim of the current user, or null. */
function claimOf(session: Ref<AuthSessionState>, name: string): string | null {
  const value = session.value.user?.[name]
  return typeof value === 'string' && value ? value : null
}

/** The user's organizations, the active one, and every call of the organizations routes. */
export function useOrganizations(): UseOrganizationsReturn {
  const nuxtApp = useNuxtApp()
  const { authPath } = publicAuthConfig(nuxtApp).endpoints
  const state = inApp(nuxtApp, () => useState<OrganizationsState>(ORGANIZATIONS_STATE, () => ({ list: [], loaded: false })))
  const session = sessionState(nuxtApp)
  const authFetch = getAuthFetch(nuxtApp)
  const orgPath = (...segments: string[]) => underPath(authPath, 'orgs', ...segments.map(encodeURIComponent))

  // In a build with organizations the fetch helper treats `<authPath>/orgs` as ordinary APIs: a 401 (expired,
  // or `session_stale` after a role change) refreshes the session once and retries once.
  const call = <T>(path: string, method: Method = 'GET', body?: Record<string, unknown>): Promise<T> => authFetch<T>(path, { method, body }) as Promise<T>

  const setList = (list: OrganizationSummary[]) => {
    state.value = { list, loaded: true }
  }
  const edit = (change: (list: OrganizationSummary[]) => OrganizationSummary[]) => {
    state.value = { ...state.value, list: change(state.value.list) }
  }
  const put = (entry: OrganizationSummary) => edit(list => [...list.filter(o => o.id !== entry.id), entry])
  const drop = (orgId: string) => edit(list => list.filter(o => o.id !== orgId))

  async function switchTo(orgId: string | null): Promise<void> {
    setAccessToken(nuxtApp, tokenOf(await call(orgPath('active'), 'POST', { orgId })))
  }

  // After leaving or deleting the active organization: a token without it. Best effort: a token that still
  // names it is refused as stale (401 `session_stale`) and refreshed on its next use anyway.
  async function forget(orgId: string): Promise<void> {
    drop(orgId)
    if (claimOf(session, 'org') === orgId) await switchTo(null).catch(() => {})
  }

  return {
    organizations: computed(() => state.value.list),
    loaded: computed(() => state.value.loaded),
    active: computed((): ActiveOrganization | null => {
      const id = claimOf(session, 'org')
      if (!id) return null
      const known = state.value.list.find(o => o.id === id)
      return { id, role: claimOf(session, 'orgRole'), ...(known ? { name: known.name, slug: known.slug } : {}) }
    }),
    refresh: async () => {
      const answer = await call<{ organizations?: unknown }>(orgPath())
      setList(listOf<OrganizationSummary>(answer?.organizations))
      return state.value.list
    },
    create: async (input) => {
      const answer = withRoleOf(await call(orgPath(), 'POST', input))
      put(summaryOf(answer))
      return answer
    },
    get: orgId => call<OrganizationWithRole>(orgPath(orgId)),
    update: async (orgId, changes) => {
      const { organization } = await call<{ organization: Organization }>(orgPath(orgId), 'PATCH', changes)
      edit(list => list.map(o => (o.id === orgId ? { ...o, name: organization.name, slug: organization.slug } : o)))
      return organization
    },
    remove: async (orgId) => {
      await call(orgPath(orgId), 'DELETE')
      await forget(orgId)
    },
    switch: switchTo,
    members: async orgId => listOf<MemberInfo>((await call<{ members?: unknown }>(orgPath(orgId, 'members')))?.members),
    updateMember: async (orgId, userId, role) => (await call<{ member: MemberInfo }>(orgPath(orgId, 'members', userId), 'PATCH', { role })).member,
    removeMember: async (orgId, userId) => {
      await call(orgPath(orgId, 'members', userId), 'DELETE')
    },
    leave: async (orgId) => {
      const me = claimOf(session, 'sub')
      if (!me) throw new Error('[svc-auth] Log in before leaving an organization.')
      await call(orgPath(orgId, 'members', me), 'DELETE')
      await forget(orgId)
    },
    invite: async (orgId, input) => (await call<{ invitation: OrganizationInvitation }>(orgPath(orgId, 'invitations'), 'POST', { ...input })).invitation,
    invitations: async orgId => listOf<OrganizationInvitation>((await call<{ invitations?: unknown }>(orgPath(orgId, 'invitations')))?.invitations),
    revokeInvitation: async (orgId, invitationId) => {
      await call(orgPath(orgId, 'invitations', invitationId), 'DELETE')
    },
    accept: async (token) => {
      const answer = withRoleOf(await call(underPath(authPath, 'invitations', 'accept'), 'POST', token ? { token } : {}))
      put(summaryOf(answer))
      return answer
    },
    // No access token: the invited person may have no account yet. The cookie carries the invitation.
    lookupInvitation: async token => invitationOf(await postAuth(underPath(authPath, 'invitations', 'lookup'), token ? { token } : {})),
    teams: async orgId => listOf<TeamSummary>((await call<{ teams?: unknown }>(orgPath(orgId, 'teams')))?.teams),
    createTeam: async (orgId, name) => (await call<{ team: Team }>(orgPath(orgId, 'teams'), 'POST', { name })).team,
    deleteTeam: async (orgId, teamId) => {
      await call(orgPath(orgId, 'teams', teamId), 'DELETE')
    },
    setTeamMember: async (orgId, teamId, userId, role) => (await call<{ member: MemberInfo }>(orgPath(orgId, 'teams', teamId, 'members', userId), 'PUT', { role })).member,
    removeTeamMember: async (orgId, teamId, userId) => {
      await call(orgPath(orgId, 'teams', teamId, 'members', userId), 'DELETE')
    },
    errorOf: authErrorOf,
  }
}
