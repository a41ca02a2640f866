import { z } from 'zod'
import { recordTypes } from '../../server/lib/store/record-types'

/** Organizations' record kinds (see store/record-types.ts). */
export const ORG_RECORDS = recordTypes({
  /** An organization, by id (org-store.ts). */
  organization: 'org',
  /** A taken slug → the organization's id (org-store.ts). */
  orgSlug: 'org-slug',
  /** Map of an organization's members: hash(userId) → member (org-store.ts). */
  orgMembers: 'org-members',
  /** One member of one organization, by `<orgId>\0<userId>`: a membership check is one read (org-store.ts). */
  orgMembership: 'org-membership',
  /** Map of a user's organizations: orgId → organization and role (org-store.ts). */
  userOrgs: 'user-orgs',
  /** Map of an organization's teams: teamId → team (org-store.ts). */
  orgTeams: 'org-teams',
  /** The lease that serialises the changes of one organization (edge/lease.ts). */
  orgLock: 'org-lock',
  /** An invitation, by the HMAC of its token (invitation-flow.ts). */
  invitation: 'org-invitation',
  /** Map of an organization's open invitations: invitation id → invitation (invitation-flow.ts). */
  orgInvitations: 'org-invitations',
  /** Invitations sent per inviter and per organization (rate limits, invitation-flow.ts). */
  invitationCount: 'org-invitation-count',
  /** The active organization of a session, by session id (organizations-feature.ts). */
  activeOrg: 'org-active',
  /** The lease of one user's creations (the per-user limit of organizations owned). */
  createdOrgs: 'org-created',
})

/** Time to live of records that stay until deleted (the store needs a positive TTL): 100 years. */
export const FOREVER_SECONDS = 100 * 365 * 86400

/** Organization and team ids: a prefix and 22 base64url characters (the store's map fields hold them as they are). */
export const ORG_ID = /^org_[\w-]{22}$/
export const TEAM_ID = /^team_[\w-]{22}$/
export const INVITATION_ID = /^inv_[\w-]{22}$/

/** A slug: lowercase letters, digits and inner hyphens, 2 to 48 characters. */
export const SLUG = /^[a-z\d][a-z\d-]{0,46}[a-z\d]$/

export const organizationSchema = z.object({
  id: z.string().regex(ORG_ID),
  name: z.string().min(1),
  slug: z.string().regex(SLUG),
  createdAt: z.string(),
})

export const memberSchema = z.object({
  userId: z.string().min(1),
  role: z.string().min(1),
  email: z.string().optional(),
  name: z.string().optional(),
  teams: z.record(z.string(), z.string()),
  joinedAt: z.string(),
})

export const teamSchema = z.object({
  id: z.string().regex(TEAM_ID),
  name: z.string().min(1),
  createdAt: z.string(),
})

/** An invitation as lists and answers show it (never its token). */
export const invitationSchema = z.object({
  id: z.string().regex(INVITATION_ID),
  email: z.string(),
  role: z.string(),
  teamId: z.string().optional(),
  /** `sub` of the member who invited. */
  invitedBy: z.string(),
  createdAt: z.string(),
  expiresAt: z.string(),
})
