/** The organization routes' handlers behind their contracts: path parameters and the caller in, the service's answer out. */
import type { H3Event } from 'h3'
import { getRouterParam, setResponseStatus } from 'h3'
import type { AuthClaims } from '../../types/auth'
import type { AuthContext } from '../../server/lib/core/context'
import { requireCaller } from '../../server/lib/core/authenticate'
import { guarded } from '../../server/lib/edge/route-contract'
import { ORGANIZATION_ROUTES } from './organizations-routes'
import * as orgs from './organization-service'
import * as invitations from './invitation-flow'

/** The caller of a read. */
const reader = (ctx: AuthContext, event: H3Event) => requireCaller(event, ctx)
/** The caller of a change: never an impersonated session. */
const writer = (ctx: AuthContext, event: H3Event) => requireCaller(event, ctx, true)

/** A path parameter, decoded (user ids may hold `:` or `@`). */
const param = (event: H3Event, name: string) => getRouterParam(event, name, { decode: true })

/** Answers 201 Created with `answer`. */
async function created<T>(event: H3Event, answer: Promise<T>): Promise<T> {
  const value = await answer
  setResponseStatus(event, 201)
  return value
}

type Caller = AuthClaims

export const createOrganization = guarded(ORGANIZATION_ROUTES.create, (ctx: AuthContext, event, input, caller: Caller) => created(event, orgs.createOrganization(ctx, event, caller, input)), writer)
export const listOrganizations = guarded(ORGANIZATION_ROUTES.list, (ctx: AuthContext, _event, _input, caller: Caller) => orgs.listOrganizations(ctx, caller), reader)
export const getOrganization = guarded(ORGANIZATION_ROUTES.get, (ctx: AuthContext, event, _input, caller: Caller) => orgs.getOrganization(ctx, caller, param(event, 'orgId')), reader)
export const updateOrganization = guarded(ORGANIZATION_ROUTES.update, (ctx: AuthContext, event, input, caller: Caller) => orgs.updateOrganization(ctx, event, caller, param(event, 'orgId'), input), writer)
export const deleteOrganization = guarded(ORGANIZATION_ROUTES.delete, (ctx: AuthContext, event, _input, caller: Caller) => orgs.deleteOrganization(ctx, event, caller, param(event, 'orgId'), orgId => invitations.dropOrganizationInvitations(ctx, orgId)), writer)

export const listMembers = guarded(ORGANIZATION_ROUTES.members, (ctx: AuthContext, event, _input, caller: Caller) => orgs.listMembers(ctx, caller, param(event, 'orgId')), reader)
export const updateMember = guarded(ORGANIZATION_ROUTES.updateMember, (ctx: AuthContext, event, input, caller: Caller) => orgs.changeMemberRole(ctx, event, caller, param(event, 'orgId'), param(event, 'userId'), input.role), writer)
export const removeMember = guarded(ORGANIZATION_ROUTES.removeMember, (ctx: AuthContext, event, _input, caller: Caller) => orgs.removeMember(ctx, event, caller, param(event, 'orgId'), param(event, 'userId')), writer)

export const invite = guarded(ORGANIZATION_ROUTES.invite, (ctx: AuthContext, event, input, caller: Caller) => created(event, invitations.createInvitation(ctx, event, caller, param(event, 'orgId'), input)), writer)
export const listInvitations = guarded(ORGANIZATION_ROUTES.invitations, (ctx: AuthContext, event, _input, caller: Caller) => invitations.listInvitations(ctx, caller, param(event, 'orgId')), reader)
export const revokeInvitation = guarded(ORGANIZATION_ROUTES.revokeInvitation, (ctx: AuthContext, event, _input, caller: Caller) => invitations.revokeInvitation(ctx, event, caller, param(event, 'orgId'), param(event, 'id')), writer)
export const openInvitation = guarded(ORGANIZATION_ROUTES.openInvitation, (ctx: AuthContext, event, input) => invitations.openInvitationLink(ctx, event, input))
export const lookupInvitation = guarded(ORGANIZATION_ROUTES.lookupInvitation, (ctx: AuthContext, event, input) => invitations.lookupInvitation(ctx, event, input))
export const acceptInvitation = guarded(ORGANIZATION_ROUTES.acceptInvitation, (ctx: AuthContext, event, input, caller: Caller) => invitations.acceptInvitation(ctx, event, caller, input), writer)

export const createTeam = guarded(ORGANIZATION_ROUTES.createTeam, (ctx: AuthContext, event, input, caller: Caller) => created(event, orgs.createTeam(ctx, event, caller, param(event, 'orgId'), input)), writer)
export const listTeams = guarded(ORGANIZATION_ROUTES.teams, (ctx: AuthContext, event, _input, caller: Caller) => orgs.listTeams(ctx, caller, param(event, 'orgId')), reader)
export const deleteTeam = guarded(ORGANIZATION_ROUTES.deleteTeam, (ctx: AuthContext, event, _input, caller: Caller) => orgs.deleteTeam(ctx, event, caller, param(event, 'orgId'), param(event, 'teamId')), writer)
export const setTeamMember = guarded(ORGANIZATION_ROUTES.setTeamMember, (ctx: AuthContext, event, input, caller: Caller) => orgs.setTeamMember(ctx, event, caller, param(event, 'orgId'), param(event, 'teamId'), param(event, 'userId'), input.role), writer)
export const removeTeamMember = guarded(ORGANIZATION_ROUTES.removeTeamMember, (ctx: AuthContext, event, _input, caller: Caller) => orgs.removeTeamMember(ctx, event, caller, param(event, 'orgId'), param(event, 'teamId'), param(event, 'userId')), writer)
