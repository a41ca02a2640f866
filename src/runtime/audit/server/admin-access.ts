/** Who may use the admin page (a reader of the whole audit log), and the user a request of it names. */
import type { H3Event } from 'h3'
import { getRouterParam } from 'h3'
import type { AuthClaims } from '../../types/auth'
import type { AuthContext } from '../../server/lib/core/context'
import { authError, message } from '../../server/lib/edge/errors'
import { requireAuditReader } from './audit-access'
import { adminUserId } from './admin-routes'

/**
 * The caller as an administrator of the admin page, else 401/403 as {@link requireAuditReader} answers: a reader
 * limited to an organization gets 403 `permission_denied` too (other users' sessions are not theirs to manage).
 */
export async function requireAuditAdmin(ctx: AuthContext, event: H3Event): Promise<AuthClaims> {
  const reader = await requireAuditReader(ctx, event)
  if (reader.organization !== undefined) throw authError('permission_denied', message('admin_needs_whole_log'))
  return reader.claims
}

/** The `:userId` of the path, decoded (ids may hold `:` or `@`), else 400 `bad_request`. */
export function userIdParam(event: H3Event): string {
  const id = adminUserId.safeParse(getRouterParam(event, 'userId', { decode: true }))
  if (!id.success) throw authError('bad_request', message('invalid_user_id'))
  return id.data
}
