/** The bodies of the organizations routes as a client reads them (docs/organizations.md, "HTTP surface"). */
import type { Organization, Team } from './organization-types'

export type { Organization, OrganizationInvitation, Team } from './organization-types'

/** One of the caller's organizations (`GET <authPath>/orgs`), with the caller's role in it. */
export interface OrganizationSummary {
  id: string
  name: string
  slug: string
  role: string
}

/** An organization and the caller's role in it: `POST /orgs`, `GET /orgs/:orgId`, `POST /invitations/accept`. */
export interface OrganizationWithRole {
  organization: Organization
  role: string
}

/** One of a member's teams, with the member's role in it. */
export interface MemberTeam {
  id: string
  name: string
  role: string
}

/** A member as the member list shows it (`GET /orgs/:orgId/members`). */
export interface MemberInfo {
  /** The member's `sub`. */
  userId: string
  /** Email and name as they were when the member joined (absent when the login gave none). */
  email?: string
  name?: string
  role: string
  teams: MemberTeam[]
}

/** What `POST /orgs/:orgId/invitations` takes: `role` defaults to `organizations.defaultRole`. */
export interface InvitationInput {
  email: string
  role?: string
  /** A team of the organization the invited person joins too. */
  teamId?: string
}

/** What an invitation offers, readable before logging in (`POST /invitations/lookup`). */
export interface InvitationPreview {
  organization: Pick<Organization, 'id' | 'name' | 'slug'>
  /** The invited address: the account that accepts must have it, verified. */
  email: string
  role: string
  /** ISO 8601. */
  expiresAt: string
}

/** A team as the team list shows it (`GET /orgs/:orgId/teams`): with how many members it has. */
export interface TeamSummary extends Team {
  members: number
}
