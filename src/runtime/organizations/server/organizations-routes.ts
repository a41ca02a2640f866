import { z } from 'zod'
import type { EndpointOptions } from '../../types/options'
import type { RouteContract } from '../../server/lib/edge/route-contract'
import { activeOrganizationResponse, successResponse } from '../../server/lib/edge/response-schemas'
import { activeOrganizationRequest, emailField } from '../../server/lib/edge/request-schemas'
import { underPath } from '../../shared/paths'
import { invitationSchema, organizationSchema, SLUG, teamSchema } from './org-records'

/** A route of organizations: `<authPath>/<path>`, served by `organizations/server/routes/<file>.<method>`. */
const route = <M extends RouteContract['method']>(path: string, method: M, file: string) =>
  ({ method, path: (e: EndpointOptions) => underPath(e.authPath, path), handler: `organizations/server/routes/${file}.${method}` })

const name = z.string().max(500)
const slug = z.string().regex(SLUG, 'slug must be 2 to 48 lowercase letters, digits or inner hyphens')
const role = z.string().min(1).max(64)
const id = z.string().max(64)
const userId = z.string().max(512)

const organization = z.strictObject(organizationSchema.shape)
const team = z.strictObject(teamSchema.shape)
const member = z.strictObject({
  userId: z.string(),
  email: z.string().optional(),
  name: z.string().optional(),
  role: z.string(),
  teams: z.array(z.strictObject({ id: z.string(), name: z.string(), role: z.string() })),
})
const invitation = z.strictObject(invitationSchema.shape)
const organizationAndRole = z.strictObject({ organization, role: z.string() })

const BEARER = ['unauthorized', 'session_revoked', 'session_stale'] as const
const WRITE = [...BEARER, 'impersonated_session', 'busy'] as const
const orgParams = { orgId: id }

/** The routes of organizations (registered when `organizations` is set). */
export const ORGANIZATION_ROUTES = {
  create: {
    id: 'OrgCreate', ...route('orgs', 'post', 'create'),
    summary: 'Create an organization',
    description: 'A new organization; the caller becomes its first member with `creatorRole`. Without `slug` one is made from the name.',
    auth: 'bearer', sameOrigin: true,
    body: z.object({ name, slug: slug.optional() }),
    ok: { schema: organizationAndRole, description: 'The organization (status 201) and the caller\'s role' },
    errors: [...WRITE, 'slug_taken', 'organization_limit'],
  },
  list: {
    id: 'OrgList', ...route('orgs', 'get', 'list'),
    summary: 'The caller\'s organizations',
    description: 'Every organization the caller is a member of, with the caller\'s role, by name.',
    auth: 'bearer',
    ok: { schema: z.strictObject({ organizations: z.array(z.strictObject({ id: z.string(), name: z.string(), slug: z.string(), role: z.string() })) }), description: 'The organizations' },
    errors: [...BEARER],
  },
  get: {
    id: 'OrgGet', ...route('orgs/:orgId', 'get', 'org'),
    summary: 'An organization and the caller\'s role',
    description: 'For members only: anyone else gets 404, as for an organization that does not exist.',
    auth: 'bearer', params: orgParams,
    ok: { schema: organizationAndRole, description: 'The organization and the caller\'s role' },
    errors: [...BEARER, 'not_found'],
  },
  update: {
    id: 'OrgUpdate', ...route('orgs/:orgId', 'patch', 'org'),
    summary: 'Rename an organization or change its slug',
    description: 'Needs `org:update`.',
    auth: 'bearer', sameOrigin: true, params: orgParams,
    body: z.object({ name: name.optional(), slug: slug.optional() }),
    ok: { schema: z.strictObject({ organization }), description: 'The organization' },
    errors: [...WRITE, 'not_found', 'permission_denied', 'slug_taken'],
  },
  delete: {
    id: 'OrgDelete', ...route('orgs/:orgId', 'delete', 'org'),
    summary: 'Delete an organization',
    description: 'Needs `org:delete`: the organization, its members, teams and invitations. Members\' access tokens carrying it go stale.',
    auth: 'bearer', sameOrigin: true, params: orgParams,
    ok: { schema: successResponse, description: 'Deleted' },
    errors: [...WRITE, 'not_found', 'permission_denied'],
  },
  members: {
    id: 'OrgMembers', ...route('orgs/:orgId/members', 'get', 'members'),
    summary: 'The members of an organization',
    description: 'Needs `member:read`. Email and name are those the member had when joining.',
    auth: 'bearer', params: orgParams,
    ok: { schema: z.strictObject({ members: z.array(member) }), description: 'The members' },
    errors: [...BEARER, 'not_found', 'permission_denied'],
  },
  updateMember: {
    id: 'OrgMemberUpdate', ...route('orgs/:orgId/members/:userId', 'patch', 'member'),
    summary: 'Change a member\'s role',
    description: 'Needs `member:update`, and a role holding every permission of both the member\'s role and the new one. Never one\'s own role; never the last owner\'s.',
    auth: 'bearer', sameOrigin: true, params: { ...orgParams, userId },
    body: z.object({ role }),
    ok: { schema: z.strictObject({ member }), description: 'The member' },
    errors: [...WRITE, 'not_found', 'permission_denied', 'role_not_grantable', 'own_role', 'unknown_role', 'last_owner'],
  },
  removeMember: {
    id: 'OrgMemberRemove', ...route('orgs/:orgId/members/:userId', 'delete', 'member'),
    summary: 'Remove a member, or leave',
    description: 'The caller\'s own id leaves the organization. Another member needs `member:delete` and a role holding every permission of theirs. The last owner cannot leave or be removed.',
    auth: 'bearer', sameOrigin: true, params: { ...orgParams, userId },
    ok: { schema: successResponse, description: 'Removed' },
    errors: [...WRITE, 'not_found', 'permission_denied', 'role_not_grantable', 'last_owner'],
  },
  invite: {
    id: 'OrgInvite', ...route('orgs/:orgId/invitations', 'post', 'invitations'),
    summary: 'Invite someone by email',
    description: 'Needs `invitation:create` and a role holding every permission of the invited role. The link goes out through the host\'s `organizations.sendInvitation`, never in the answer, which is the same whether or not the address has an account.',
    auth: 'bearer', sameOrigin: true, params: orgParams,
    body: z.object({ email: emailField, role: role.optional(), teamId: id.optional() }),
    ok: { schema: z.strictObject({ invitation }), description: 'The invitation (status 201)' },
    errors: [...WRITE, 'not_found', 'permission_denied', 'role_not_grantable', 'unknown_role', 'invalid_email', 'rate_limited', 'send_failed'],
  },
  invitations: {
    id: 'OrgInvitations', ...route('orgs/:orgId/invitations', 'get', 'invitations'),
    summary: 'The open invitations of an organization',
    description: 'Needs `invitation:read`. Newest first; never a token.',
    auth: 'bearer', params: orgParams,
    ok: { schema: z.strictObject({ invitations: z.array(invitation) }), description: 'The invitations' },
    errors: [...BEARER, 'not_found', 'permission_denied'],
  },
  revokeInvitation: {
    id: 'OrgInvitationRevoke', ...route('orgs/:orgId/invitations/:id', 'delete', 'invitation'),
    summary: 'Revoke an invitation',
    description: 'Needs `invitation:delete`: its link stops working at once.',
    auth: 'bearer', sameOrigin: true, params: { ...orgParams, id },
    ok: { schema: successResponse, description: 'Revoked' },
    errors: [...WRITE, 'not_found', 'permission_denied'],
  },
  openInvitation: {
    id: 'InvitationOpen', ...route('invitations/accept', 'get', 'accept'),
    summary: 'The emailed invitation link',
    description: 'Keeps the token in an HttpOnly cookie and redirects to the invitation page (`organizations.invitationPath`), which accepts, or asks to log in or register first. An unknown or expired token redirects with `?error=invitation_invalid`.',
    query: z.object({ token: z.string().max(128).optional() }),
    rateLimit: 'invitation',
    redirect: 'The invitation page',
    errors: [],
  },
  lookupInvitation: {
    id: 'InvitationLookup', ...route('invitations/lookup', 'post', 'lookup'),
    summary: 'What an invitation is for',
    description: 'For the invitation page before login: the organization, the invited address and role. The token comes from the body or the invitation cookie.',
    sameOrigin: true, rateLimit: 'invitation',
    body: z.object({ token: z.string().max(128).optional() }),
    ok: { schema: z.strictObject({ organization: z.strictObject({ id: z.string(), name: z.string(), slug: z.string() }), email: z.string(), role: z.string(), expiresAt: z.string() }), description: 'The invitation' },
    errors: ['invitation_invalid'],
  },
  acceptInvitation: {
    id: 'InvitationAccept', ...route('invitations/accept', 'post', 'accept'),
    summary: 'Accept an invitation',
    description: 'The caller joins with the invited role when their verified email is the invited one (password accounts are verified by their code, OAuth accounts by the provider). Needs the session\'s refresh cookie beside the bearer. The token comes from the body or the invitation cookie; single use.',
    auth: 'bearerAndRefreshCookie', sameOrigin: true, rateLimit: 'invitation',
    body: z.object({ token: z.string().max(128).optional() }),
    ok: { schema: organizationAndRole, description: 'The organization and the new member\'s role' },
    errors: [...WRITE, 'invitation_invalid', 'invitation_email_mismatch', 'already_member'],
  },
  createTeam: {
    id: 'OrgTeamCreate', ...route('orgs/:orgId/teams', 'post', 'teams'),
    summary: 'Create a team',
    description: 'Needs `team:create`.',
    auth: 'bearer', sameOrigin: true, params: orgParams,
    body: z.object({ name }),
    ok: { schema: z.strictObject({ team }), description: 'The team (status 201)' },
    errors: [...WRITE, 'not_found', 'permission_denied', 'team_limit'],
  },
  teams: {
    id: 'OrgTeams', ...route('orgs/:orgId/teams', 'get', 'teams'),
    summary: 'The teams of an organization',
    description: 'Needs `team:read`. By name, with how many members each has.',
    auth: 'bearer', params: orgParams,
    ok: { schema: z.strictObject({ teams: z.array(team.extend({ members: z.number().int().nonnegative() })) }), description: 'The teams' },
    errors: [...BEARER, 'not_found', 'permission_denied'],
  },
  deleteTeam: {
    id: 'OrgTeamDelete', ...route('orgs/:orgId/teams/:teamId', 'delete', 'team'),
    summary: 'Delete a team',
    description: 'Needs `team:delete`.',
    auth: 'bearer', sameOrigin: true, params: { ...orgParams, teamId: id },
    ok: { schema: successResponse, description: 'Deleted' },
    errors: [...WRITE, 'not_found', 'permission_denied'],
  },
  setTeamMember: {
    id: 'OrgTeamMemberSet', ...route('orgs/:orgId/teams/:teamId/members/:userId', 'put', 'team-member'),
    summary: 'Put a member in a team with a role',
    description: 'Needs `team:update` and a role holding every permission of the member\'s role, of their current team role and of the new one. Never one\'s own team role.',
    auth: 'bearer', sameOrigin: true, params: { ...orgParams, teamId: id, userId },
    body: z.object({ role }),
    ok: { schema: z.strictObject({ member }), description: 'The member' },
    errors: [...WRITE, 'not_found', 'permission_denied', 'role_not_grantable', 'unknown_role', 'own_role'],
  },
  removeTeamMember: {
    id: 'OrgTeamMemberRemove', ...route('orgs/:orgId/teams/:teamId/members/:userId', 'delete', 'team-member'),
    summary: 'Take a member out of a team',
    description: 'The caller\'s own id leaves the team; another member needs `team:update` and a role holding every permission of theirs.',
    auth: 'bearer', sameOrigin: true, params: { ...orgParams, teamId: id, userId },
    ok: { schema: successResponse, description: 'Removed' },
    errors: [...WRITE, 'not_found', 'permission_denied', 'role_not_grantable'],
  },
  active: {
    id: 'OrgSetActive', ...route('orgs/active', 'post', 'active'),
    summary: 'Switch the active organization',
    description: 'Makes one of the caller\'s organizations (or none, `null`) the active one of the session of the bearer, which must be the session of the refresh cookie; answers an access token whose `org` and `orgRole` claims name it. The session remembers the choice: its refreshed tokens keep it while the caller is a member. An organization the caller is not a member of, or a malformed id, answers 404.',
    auth: 'bearerAndRefreshCookie', sameOrigin: true,
    body: activeOrganizationRequest,
    ok: { schema: activeOrganizationResponse, description: 'An access token with the claims of the organization' },
    errors: [...BEARER, 'invalid_refresh_token', 'impersonated_session', 'not_found'],
  },
} satisfies Record<string, RouteContract>
