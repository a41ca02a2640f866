/** The active organization of each session, and where organizations live (the host's adapter, else the store). */
import type { H3Event } from 'h3'
import { z } from 'zod'
import type { OrganizationsAdapter } from '../organization-types'
import type { AuthContext } from '../../server/lib/core/context'
import { getAuthHandlers } from '../../server/lib/core/handlers'
import { ORG_ID, ORG_RECORDS } from './org-records'
import { createStoreOrganizations } from './org-store'

const activeRecord = z.strictObject({ orgId: z.string().regex(ORG_ID) })

/** The store adapter of each context (one per process). */
const storeAdapters = new WeakMap<AuthContext, OrganizationsAdapter>()

/**
 * Where organizations, members and teams live: the host's `defineAuthHandlers({ organizations: { adapter } })`
 * (read on each call: plugins may register it after start-up), else the module's store.
 */
export function organizationsAdapter(ctx: AuthContext, _event?: H3Event): OrganizationsAdapter {
  const host = getAuthHandlers().organizations?.adapter
  if (host) return host
  let adapter = storeAdapters.get(ctx)
  if (!adapter) {
    adapter = createStoreOrganizations(ctx.store)
    storeAdapters.set(ctx, adapter)
  }
  return adapter
}

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
