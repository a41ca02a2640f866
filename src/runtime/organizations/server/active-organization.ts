/** The active organization of each session, and the claims it gives the session's tokens. */
import { z } from 'zod'
import type { AuthContext } from '../../server/lib/core/context'
import { ORG_ID, ORG_RECORDS } from './org-records'
import { organizationsAdapter } from './organization-service'

const activeRecord = z.strictObject({ orgId: z.string().regex(ORG_ID) })

/** The organization the session `sid` chose (one store read), or undefined. */
export async function readActiveOrganization(ctx: AuthContext, sid: string): Promise<string | undefined> {
  return (await ctx.store.read(ctx.store.key(ORG_RECORDS.activeOrg, sid), activeRecord))?.orgId
}

/** Remembers the session's choice for as long as a refresh cookie lives; null forgets it. */
export async function writeActiveOrganization(ctx: AuthContext, sid: string, orgId: string | null): Promise<void> {
  const key = ctx.store.key(ORG_RECORDS.activeOrg, sid)
  if (orgId === null) await ctx.store.remove(key)
  else await ctx.store.write(key, { orgId }, ctx.lifetimes.refresh)
}

/**
 * The claims of the session's organization: `{ org, orgRole }` while the session has one active and its user is
 * still a member of it, else none (one store read, then one `getMember`).
 */
export async function organizationClaims(ctx: AuthContext, session: { userId: string, sid: string }): Promise<{ org: string, orgRole: string } | Record<string, never>> {
  const orgId = await readActiveOrganization(ctx, session.sid)
  if (!orgId) return {}
  const member = await organizationsAdapter(ctx).getMember(orgId, session.userId)
  return member ? { org: orgId, orgRole: member.role } : {}
}
