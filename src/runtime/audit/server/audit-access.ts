/** Who may read the audit log, and how much of it: the permission `audit:read`. */
import type { H3Event } from 'h3'
import type { AuthClaims } from '../../types/auth'
import type { AuthContext } from '../../server/lib/core/context'
import { requireCaller } from '../../server/lib/core/authenticate'
import { getAuthHandlers } from '../../server/lib/core/handlers'
import { authError, message } from '../../server/lib/edge/errors'
import { rolesGrant } from '../../shared/permissions'

/** The permission that reads the audit log. */
export const AUDIT_READ = 'audit:read'

/** A reader of the audit log: the whole log, or the events of one organization only. */
export interface AuditReader {
  claims: AuthClaims
  /** Set when the caller reads through their role in this organization (its events only). */
  organization?: string
}

/**
 * The caller as a reader of the audit log, else 403 `permission_denied` (401 without a token; impersonated
 * sessions never read it): `isAuditReader(user)` reads everything; with organizations, a role of the active
 * organization that grants `audit:read` reads that organization's events.
 */
export async function requireAuditReader(ctx: AuthContext, event: H3Event): Promise<AuditReader> {
  const claims = await requireCaller(event, ctx, true)
  const isAuditReader = getAuthHandlers().audit?.isAuditReader
  if (isAuditReader && (await isAuditReader(claims, event)) === true) return { claims }
  const roles = ctx.options.organizations?.roles
  if (roles && typeof claims.org === 'string' && typeof claims.orgRole === 'string' && rolesGrant(roles, [claims.orgRole], AUDIT_READ)) return { claims, organization: claims.org }
  throw authError('permission_denied', message('audit_read_permission'))
}
