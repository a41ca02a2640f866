/** The public type of `useOrganizations()` (implementation: useOrganizations.ts). */
import type { ComputedRef } from 'vue'
import type { InvitationInput, InvitationPreview, MemberInfo, Organization, OrganizationInvitation, OrganizationSummary, OrganizationWithRole, Team, TeamSummary } from '../org-answer-types'

/** The active organization: id and role from the access token's `org` and `orgRole` claims, name and slug from the list once loaded. */
export interface ActiveOrganization {
  id: string
  /** The `orgRole` claim (the user's role in it when the token was signed). */
  role: string | null
  /** From `organizations` (undefined until `refresh()` loaded it). */
  name?: string
  slug?: string
}

/**
 * What `useOrganizations()` returns. Every call is a request with the access token under
 * `<authPath>/orgs` (or `/invitations`); a 401 (an expired or stale token, `session_stale`)
 * refreshes the session once and retries once. A refusal rejects with the FetchError, whose
 * `data.error` is the module's code (`errorOf` reads it).
 */
export interface UseOrganizationsReturn {
  /** The user's organizations with the user's role in each, as the last `refresh()` (or a change made here) left them. */
  organizations: ComputedRef<OrganizationSummary[]>
  /** True once `refresh()` has loaded the list. */
  loaded: ComputedRef<boolean>
  /** The organization of the token's `org` claim, or null. */
  active: ComputedRef<ActiveOrganization | null>
  /** GET `/orgs`: loads the list into `organizations` and resolves it. */
  refresh(): Promise<OrganizationSummary[]>
  /** POST `/orgs`: a new organization, the creator with `creatorRole`; added to `organizations`. */
  create(input: { name: string, slug?: string }): Promise<OrganizationWithRole>
  /** GET `/orgs/:orgId`: the organization and the user's role (404 for a non-member). */
  get(orgId: string): Promise<OrganizationWithRole>
  /** PATCH `/orgs/:orgId` (`org:update`): renames or moves it; `organizations` follows. */
  update(orgId: string, changes: { name?: string, slug?: string }): Promise<Organization>
  /** DELETE `/orgs/:orgId` (`org:delete`); when it was the active one, the session switches to none. */
  remove(orgId: string): Promise<void>
  /** POST `/orgs/active`: makes `orgId` (or none) the session's active organization and uses the new access token at once. */
  switch(orgId: string | null): Promise<void>
  /** GET `/orgs/:orgId/members`. */
  members(orgId: string): Promise<MemberInfo[]>
  /** PATCH `/orgs/:orgId/members/:userId` (`member:update`, never one's own role, never above one's own). */
  updateMember(orgId: string, userId: string, role: string): Promise<MemberInfo>
  /** DELETE `/orgs/:orgId/members/:userId` (`member:delete`; the last owner stays: 409 `last_owner`). */
  removeMember(orgId: string, userId: string): Promise<void>
  /** Leaves an organization (DELETE of one's own membership); when it was the active one, the session switches to none. */
  leave(orgId: string): Promise<void>
  /** POST `/orgs/:orgId/invitations`: the link goes to the invited address through the host's `sendInvitation`. */
  invite(orgId: string, input: InvitationInput): Promise<OrganizationInvitation>
  /** GET `/orgs/:orgId/invitations`: the open invitations. */
  invitations(orgId: string): Promise<OrganizationInvitation[]>
  /** DELETE `/orgs/:orgId/invitations/:id`: the link stops working. */
  revokeInvitation(orgId: string, invitationId: string): Promise<void>
  /**
   * POST `/invitations/accept`: joins as the logged-in user. Without `token` the invitation cookie
   * that the emailed link set carries it (the token never reaches the page's JavaScript).
   */
  accept(token?: string): Promise<OrganizationWithRole>
  /** POST `/invitations/lookup` without the access token: what the invitation of the cookie (or `token`) offers. */
  lookupInvitation(token?: string): Promise<InvitationPreview>
  /** GET `/orgs/:orgId/teams`: by name, each with how many members it has. */
  teams(orgId: string): Promise<TeamSummary[]>
  /** POST `/orgs/:orgId/teams`. */
  createTeam(orgId: string, name: string): Promise<Team>
  /** DELETE `/orgs/:orgId/teams/:teamId` (its members stay in the organization). */
  deleteTeam(orgId: string, teamId: string): Promise<void>
  /** PUT `/orgs/:orgId/teams/:teamId/members/:userId`: adds a member to a team, or changes its role there. */
  setTeamMember(orgId: string, teamId: string, userId: string, role: string): Promise<MemberInfo>
  /** DELETE `/orgs/:orgId/teams/:teamId/members/:userId`. */
  removeTeamMember(orgId: string, teamId: string, userId: string): Promise<void>
  /** `{ error, message }` of a refused call (the module's error body; `network_error` without an answer). */
  errorOf(error: unknown): { error: string, message: string }
}
