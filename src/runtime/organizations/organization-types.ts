/**
 * Options, records and host handlers of organizations (`svcAuth.organizations`): organizations with
 * members, teams, roles as data and invitations. Setting the key (even to `{}`) turns them on.
 */
import type { H3Event } from 'h3'
import type { Duration, Parsed } from '../types/time-span'
import type { AuthClaims } from '../types/identity'

/** Permissions by role name: `resource:action` strings, `*` for all, `resource:*` for every action on one resource. */
export type RoleTable = Record<string, string[]>

export interface OrganizationsOptions {
  /**
   * Roles and their permissions: `resource:action` strings with `*` wildcards. The module's own
   * permissions are `org:read`, `org:update`, `org:delete`, `member:read`, `member:update`,
   * `member:delete`, `invitation:create`, `invitation:read`, `invitation:delete`, `team:create`,
   * `team:read`, `team:delete`, `team:update`; a host adds its own (`project:write`).
   * @default { owner: ['*'], admin: ['org:read', 'org:update', 'member:*', 'invitation:*', 'team:*'], member: ['org:read', 'member:read', 'team:read'] }
   */
  roles?: RoleTable
  /** The role of whoever creates an organization (an owner: it must hold every permission, `*`). @default 'owner' */
  creatorRole?: string
  /** The role an invitation gives when it names none. @default 'member' */
  defaultRole?: string
  /** How long an invitation can be accepted (seconds or `'7d'`). @default '7d' */
  invitationTTL?: Duration
  /** The page an invitation link lands on: it accepts, or asks to log in or register first. @default '/auth/invitation' */
  invitationPath?: string
  /** Where the invitation page goes once the invitation is accepted. @default '/' */
  redirectAfterAccept?: string
  /** Longest organization or team name, in characters. @default 100 */
  maxNameLength?: number
  /** Most teams in one organization. @default 200 */
  maxTeams?: number
  /** Most organizations one user may own at once (0: no limit). @default 50 */
  maxOrganizationsPerUser?: number
  /** Invitations one member may send per hour, over every organization (0: no limit). @default 50 */
  invitationsPerInviter?: number
  /** Invitations one organization may send per day (0: no limit). @default 500 */
  invitationsPerOrganization?: number
}

/** The options with every default applied. */
export type ResolvedOrganizationsOptions = Parsed<Required<OrganizationsOptions>>

/** An organization. */
export interface Organization {
  /** Opaque id (`org_…`), never reused. */
  id: string
  name: string
  /** Unique, lowercase `a-z0-9-`, 2 to 48 characters. */
  slug: string
  /** When it was created (ISO 8601). */
  createdAt: string
}

/** A user's membership of one organization. */
export interface OrganizationMember {
  /** The member's `sub`. */
  userId: string
  /** The member's role in the organization (a key of `organizations.roles`). */
  role: string
  /** Email and name as they were when the user joined (for member lists: the module keeps no user table). */
  email?: string
  name?: string
  /** The member's teams: team id → the member's role in that team. */
  teams: Record<string, string>
  /** When the user joined (ISO 8601). */
  joinedAt: string
}

/** A team inside an organization. */
export interface Team {
  /** Opaque id (`team_…`). */
  id: string
  name: string
  /** When it was created (ISO 8601). */
  createdAt: string
}

/** One of a user's organizations with the user's role in it. */
export interface UserOrganization {
  organization: Organization
  role: string
}

/**
 * Where organizations, members and teams live. The module's store is the default; a host that keeps
 * them in its own database passes one as `defineAuthHandlers({ organizations: { adapter } })`, and proves
 * it with `verifyOrganizationsAdapter` from `nuxt-svc-auth/testing`. The module serialises every change of
 * one organization (a lock in its store), so an adapter needs no transactions of its own; it must make a
 * taken slug fail (`'slug_taken'`) atomically, since two organizations may claim one at once.
 */
export interface OrganizationsAdapter {
  /** Stores a new organization with its first member; `'slug_taken'` when another has the slug. */
  createOrganization(organization: Organization, creator: OrganizationMember): Promise<'created' | 'slug_taken'>
  /** The organization, or null. */
  getOrganization(orgId: string): Promise<Organization | null>
  /** Renames or moves an organization: the updated one, `'slug_taken'`, or null when it does not exist. */
  updateOrganization(orgId: string, changes: { name?: string, slug?: string }): Promise<Organization | 'slug_taken' | null>
  /** Deletes an organization with its members and teams (its slug becomes free). */
  deleteOrganization(orgId: string): Promise<void>
  /** The organizations a user is a member of, with the user's role in each (any order). */
  listUserOrganizations(userId: string): Promise<UserOrganization[]>
  /** A user's membership, or null. */
  getMember(orgId: string, userId: string): Promise<OrganizationMember | null>
  /** Every member of an organization (any order). */
  listMembers(orgId: string): Promise<OrganizationMember[]>
  /** Adds a member or replaces one (role, teams). */
  saveMember(orgId: string, member: OrganizationMember): Promise<void>
  /** Removes a member (no error when absent). */
  removeMember(orgId: string, userId: string): Promise<void>
  /** The teams of an organization (any order). */
  listTeams(orgId: string): Promise<Team[]>
  /** Stores a new team. */
  createTeam(orgId: string, team: Team): Promise<void>
  /** Deletes a team (members' `teams` entries of it are removed by the module). */
  deleteTeam(orgId: string, teamId: string): Promise<void>
}

/** An invitation as the organization's lists show it (never its token). */
export interface OrganizationInvitation {
  id: string
  email: string
  role: string
  teamId?: string
  /** `sub` of the member who invited. */
  invitedBy: string
  createdAt: string
  expiresAt: string
}

/** Argument of `organizations.sendInvitation`. */
export interface InvitationMessage {
  /** The invited address (canonical: trimmed, lowercase). */
  email: string
  /** `<authPath>/invitations/accept?token=…`, absolute on `publicUrl` when set: the only place the token goes. */
  link: string
  organization: Organization
  /** Claims of the member who invited. */
  inviter: AuthClaims
  role: string
  expiresAt: Date
  event: H3Event
  /** The locale of the request that invites (docs/i18n.md), e.g. `de`. */
  locale: string
  /** The email in that locale, ready to send: it carries the link. */
  message: { subject: string, text: string }
}

/** Argument of `organizations.resolveRoles`. */
export interface ResolveRolesInput {
  /** Claims of the caller's access token. */
  user: AuthClaims
  /** The organization the check is in (the active one, unless the check names another). */
  organization: string
  /** What the check is about, as the caller of `requirePermission` / `hasPermission` passed it. */
  resource: unknown
  event: H3Event
}

/** Handlers of organizations (`defineAuthHandlers({ organizations })`). */
export interface OrganizationsHandlers {
  /**
   * Required: delivers an invitation (the dev mail log, email). If it throws, the invitation is deleted
   * and the request answers 500 `send_failed`.
   */
  sendInvitation?: (message: InvitationMessage) => void | Promise<void>
  /** Extra roles of a user on one resource (the editor of one document), added to the role in the organization. */
  resolveRoles?: (input: ResolveRolesInput) => string[] | undefined | Promise<string[] | undefined>
  /** Where organizations, members and teams live. @default the module's store */
  adapter?: OrganizationsAdapter
}
