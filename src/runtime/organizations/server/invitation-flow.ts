/**
 * Invitations: single use, expiring, bound to one verified email, kept in the module's store (by the
 * HMAC of their token, never the token) with a per-organization index. The token goes out only through
 * the host's `sendInvitation`; the emailed link puts it in an HttpOnly cookie for the invitation page.
 */
import type { H3Event } from 'h3'
import { deleteCookie, getCookie, sendRedirect, setCookie } from 'h3'
import { z } from 'zod'
import type { AuthClaims } from '../../types/auth'
import type { Organization, OrganizationInvitation } from '../organization-types'
import type { AuthContext } from '../../server/lib/core/context'
import { authError, message } from '../../server/lib/edge/errors'
import { localizedEmail } from '../../server/lib/core/locale-of'
import { requireEmail, normalizeEmail } from '../../server/lib/edge/email'
import { getAuthHandlers } from '../../server/lib/core/handlers'
import { reserveUnits, retryAfterOf } from '../../server/lib/edge/rate-counter'
import { rateLimited, tooMany } from '../../server/lib/edge/rate-limit'
import { securityEvent } from '../../server/lib/edge/security-event'
import { randomToken } from '../../server/lib/store/crypto'
import { hostCookieAttributes, hostCookieName } from '../../server/lib/edge/cookie-path'
import { bearerSession } from '../../server/lib/core/session-tokens'
import { underPath } from '../../shared/paths'
import { INVITATION_ID, invitationSchema, ORG_RECORDS, TEAM_ID } from './org-records'
import { grantable, memberOf, orgHook, organizationsAdapter, orgOptions, requireGrantable, requireOrgPermission, requireRole, teamsOf, withOrganization } from './organization-service'

const invitationRecord = invitationSchema.extend({
  orgId: z.string(),
  /** The storage key of the token's record (an HMAC), so that a revocation can remove it. */
  at: z.string(),
})

type InvitationRecord = z.output<typeof invitationRecord>

/** Longest token read from a body or cookie (tokens are 43 characters). */
const MAX_TOKEN = 128

/** The invitation cookie: the emailed link's token, for the invitation page (HttpOnly: no script sees it). */
const COOKIE = 'svc-auth-invitation'
/** How long the cookie keeps a token: long enough to register and prove the email. */
const COOKIE_SECONDS = 24 * 3600

const tokenKey = (ctx: AuthContext, token: string) => ctx.store.key(ORG_RECORDS.invitation, token)
const indexKey = (ctx: AuthContext, orgId: string) => ctx.store.key(ORG_RECORDS.orgInvitations, orgId)

/** An invitation as lists and answers show it. */
function view(record: InvitationRecord): OrganizationInvitation {
  const { at: _at, orgId: _org, ...shown } = record
  return shown
}

/** The emailed link: `<authPath>/invitations/accept?token=…`, absolute on `publicUrl` when set. */
export function invitationLink(ctx: AuthContext, token: string): string {
  const base = (ctx.options.publicUrl ?? '').replace(/\/+$/, '')
  return `${base}${underPath(ctx.options.endpoints.authPath, 'invitations', 'accept')}?${new URLSearchParams({ token })}`
}

/** 429 unless the inviter (per hour) and the organization (per day) are within their invitation limits; a refusal counts for neither. */
async function countInvitation(ctx: AuthContext, event: H3Event, inviter: AuthClaims, orgId: string): Promise<void> {
  const { invitationsPerInviter, invitationsPerOrganization } = orgOptions(ctx)
  const limits: Array<['inviter' | 'org', string, number, number]> = [['inviter', inviter.sub, invitationsPerInviter, 3600], ['org', orgId, invitationsPerOrganization, 86400]]
  const taken: Array<() => Promise<void>> = []
  for (const [per, id, max, window] of limits) {
    if (max <= 0) continue
    const subject = `${per}\0${id}`
    const key = ctx.store.key(ORG_RECORDS.invitationCount, subject)
    const reserved = await reserveUnits(ctx, [{ key, max }], window)
    if (!reserved.granted) {
      await Promise.all(taken.map(release => release()))
      await rateLimited(ctx, event, 'invitations', per, subject, { caller: inviter, organization: orgId })
      throw tooMany(await retryAfterOf(ctx, key, window))
    }
    taken.push(reserved.release)
  }
}

/** POST orgs/:orgId/invitations (`invitation:create`): stores the invitation, then sends its link through the host. */
export async function createInvitation(ctx: AuthContext, event: H3Event, caller: AuthClaims, orgId: string | undefined, input: { email: string, role?: string, teamId?: string }): Promise<{ invitation: OrganizationInvitation }> {
  const { organization, member } = await requireOrgPermission(ctx, orgId, caller, 'invitation:create')
  const email = requireEmail(input.email)
  const role = requireRole(ctx, input.role ?? orgOptions(ctx).defaultRole)
  requireGrantable(ctx, member.role, role)
  if (input.teamId !== undefined && !(TEAM_ID.test(input.teamId) && (await teamsOf(ctx, organization.id)).has(input.teamId))) throw authError('not_found', message('no_such_team'))
  const send = getAuthHandlers().organizations?.sendInvitation
  if (!send) throw authError('internal_error', message('send_invitation_missing'))
  await countInvitation(ctx, event, caller, organization.id)

  const ttl = orgOptions(ctx).invitationTTL
  const token = randomToken(32)
  const key = tokenKey(ctx, token)
  const createdAt = new Date()
  const expiresAt = new Date(createdAt.getTime() + ttl * 1000)
  const record: InvitationRecord = {
    id: `inv_${randomToken(16)}`, orgId: organization.id, email, role, ...(input.teamId ? { teamId: input.teamId } : {}),
    invitedBy: caller.sub, createdAt: createdAt.toISOString(), expiresAt: expiresAt.toISOString(), at: key.current,
  }
  await ctx.store.write(key, record, ttl)
  await ctx.store.mapSet(indexKey(ctx, organization.id), record.id, record, ttl)
  try {
    const link = invitationLink(ctx, token)
    const localized = await localizedEmail(ctx, event, 'invitation', { organization: organization.name, role, link, expires: expiresAt.toISOString().slice(0, 10) })
    await send({ email, link, organization, inviter: caller, role, expiresAt, event, ...localized })
  }
  catch (error) {
    await dropInvitation(ctx, organization.id, record)
    ctx.logger.error('organizations.sendInvitation failed: the invitation was deleted', error)
    throw authError('send_failed', message('invitation_send_failed'))
  }
  const invitation = view(record)
  await orgHook(ctx, 'svc:org:invitationCreated', { actor: caller, organization, invitation, event })
  return { invitation }
}

async function dropInvitation(ctx: AuthContext, orgId: string, record: InvitationRecord): Promise<void> {
  await Promise.all([ctx.store.remove(ctx.store.at(record.at)), ctx.store.mapDelete(indexKey(ctx, orgId), record.id)])
}

/** The open invitations of an organization, newest first. */
async function openInvitations(ctx: AuthContext, orgId: string): Promise<InvitationRecord[]> {
  const entries = await ctx.store.mapEntries(indexKey(ctx, orgId), invitationRecord)
  return entries.map(entry => entry.value).sort((a, b) => b.createdAt.localeCompare(a.createdAt))
}

/** GET orgs/:orgId/invitations (`invitation:read`). */
export async function listInvitations(ctx: AuthContext, caller: AuthClaims, orgId: string | undefined): Promise<{ invitations: OrganizationInvitation[] }> {
  const { organization } = await requireOrgPermission(ctx, orgId, caller, 'invitation:read')
  return { invitations: (await openInvitations(ctx, organization.id)).map(view) }
}

/** DELETE orgs/:orgId/invitations/:id (`invitation:delete`): the invitation stops working at once. */
export async function revokeInvitation(ctx: AuthContext, event: H3Event, caller: AuthClaims, orgId: string | undefined, id: string | undefined): Promise<{ success: true }> {
  const { organization } = await requireOrgPermission(ctx, orgId, caller, 'invitation:delete')
  const record = id && INVITATION_ID.test(id) ? (await openInvitations(ctx, organization.id)).find(entry => entry.id === id) : undefined
  if (!record) throw authError('not_found', message('no_such_invitation'))
  await dropInvitation(ctx, organization.id, record)
  await orgHook(ctx, 'svc:org:invitationRevoked', { actor: caller, organization, invitation: view(record), event })
  return { success: true }
}

/** Every invitation of an organization (when it is deleted). */
export async function dropOrganizationInvitations(ctx: AuthContext, orgId: string): Promise<void> {
  const records = await openInvitations(ctx, orgId)
  await Promise.all(records.map(record => dropInvitation(ctx, orgId, record)))
}

/** The token of a request: the body's, else the invitation cookie's. */
function tokenOf(ctx: AuthContext, event: H3Event, given: string | undefined): string | undefined {
  const token = given ?? getCookie(event, hostCookieName(ctx.options, COOKIE))
  return token && token.length <= MAX_TOKEN ? token : undefined
}

/** The live invitation of a token (its organization still there), or null. */
async function findInvitation(ctx: AuthContext, token: string | undefined): Promise<{ record: InvitationRecord, organization: Organization } | null> {
  if (!token) return null
  const record = await ctx.store.read(tokenKey(ctx, token), invitationRecord)
  const organization = record ? await organizationsAdapter(ctx).getOrganization(record.orgId) : null
  return record && organization ? { record, organization } : null
}

/** GET invitations/accept?token=…: keeps the token in an HttpOnly cookie and sends the browser to the invitation page. */
export async function openInvitationLink(ctx: AuthContext, event: H3Event, input: { token?: string }): Promise<void> {
  const found = await findInvitation(ctx, tokenOf(ctx, event, input.token ?? ''))
  const page = orgOptions(ctx).invitationPath
  if (!found) {
    await sendRedirect(event, `${page}?error=invitation_invalid`, 302)
    return
  }
  setCookie(event, hostCookieName(ctx.options, COOKIE), input.token!, { ...hostCookieAttributes(ctx.options), maxAge: COOKIE_SECONDS })
  await sendRedirect(event, page, 302)
}

/** POST invitations/lookup: what the invitation page shows before login (the token's holder may know the address it went to). */
export async function lookupInvitation(ctx: AuthContext, event: H3Event, input: { token?: string }): Promise<{ organization: { id: string, name: string, slug: string }, email: string, role: string, expiresAt: string }> {
  const found = await findInvitation(ctx, tokenOf(ctx, event, input.token))
  if (!found) throw authError('invitation_invalid')
  const { organization, record } = found
  return { organization: { id: organization.id, name: organization.name, slug: organization.slug }, email: record.email, role: record.role, expiresAt: record.expiresAt }
}

/**
 * The verified email of the caller's session (`emailVerified`: set by the password flows, whose code
 * proved it, and by OAuth providers from `email_verified`; never by a name). Read from the refresh
 * cookie's session, which must be the bearer's own (`sid`).
 */
async function verifiedEmailOf(ctx: AuthContext, event: H3Event, caller: AuthClaims): Promise<string | undefined> {
  const session = await bearerSession(event, ctx, caller)
  if (!session) return undefined
  const email = typeof session.user.email === 'string' ? normalizeEmail(session.user.email) : undefined
  return session.user.emailVerified === true ? email : undefined
}

/**
 * POST invitations/accept: the caller (bearer, with the session's refresh cookie) joins with the
 * invitation's role when their verified email is the invited one. Checked before the token is spent;
 * the take is atomic, so of concurrent accepts exactly one joins.
 */
export async function acceptInvitation(ctx: AuthContext, event: H3Event, caller: AuthClaims, input: { token?: string }): Promise<{ organization: Organization, role: string }> {
  const token = tokenOf(ctx, event, input.token)
  const found = await findInvitation(ctx, token)
  if (!found) throw authError('invitation_invalid')
  const { record, organization } = found
  const email = await verifiedEmailOf(ctx, event, caller)
  if (email !== record.email) {
    await securityEvent(ctx, event, { type: 'org.invitation_refused', outcome: 'failure', caller, organization: organization.id, details: { reason: email ? 'other_address' : 'unverified_address', invitation: record.id } })
    throw authError('invitation_email_mismatch')
  }
  const adapter = organizationsAdapter(ctx)
  const role = await withOrganization(ctx, organization.id, async () => {
    if (await adapter.getMember(organization.id, caller.sub)) throw authError('already_member')
    // An invitation is as good as its inviter: removed, or no longer holding the role it gives, it is void.
    const inviter = await adapter.getMember(organization.id, record.invitedBy)
    if (!inviter || !grantable(ctx, inviter.role, record.role)) throw authError('invitation_invalid')
    if (!(await ctx.store.take(tokenKey(ctx, token!), invitationRecord))) throw authError('invitation_invalid')
    await ctx.store.mapDelete(indexKey(ctx, organization.id), record.id)
    const member = memberOf(caller, record.role)
    const teams = record.teamId && (await teamsOf(ctx, organization.id)).has(record.teamId) ? { [record.teamId]: record.role } : {}
    await adapter.saveMember(organization.id, { ...member, teams })
    return record.role
  })
  deleteCookie(event, hostCookieName(ctx.options, COOKIE), hostCookieAttributes(ctx.options))
  await orgHook(ctx, 'svc:org:memberAdded', { actor: caller, organization, member: { userId: caller.sub, role }, invitation: view(record), event })
  return { organization, role }
}
