/**
 * `requirePermission` and `hasPermission`: the permission checks of the host's own routes. Auto-imported in
 * server code when `organizations` is set.
 */
import type { H3Event } from 'h3'
import { authenticate, authenticationError } from '../../../server/lib/core/authenticate'
import { authError } from '../../../server/lib/edge/errors'
import { useAuthContext } from '../../../server/utils/auth-context'
import { permitted, type PermissionScope } from '../permission-check'

export type { PermissionScope } from '../permission-check'

/**
 * True when the caller (the request's bearer token) holds `permission` (`resource:action`) in the active
 * organization, or in `organization` when given (its membership is looked up). The roles that count: the
 * member's role, the member's role in `resource.teamId` when that is one of the member's teams, and what the
 * host's `organizations.resolveRoles` adds for `resource`. False without a valid token, for a non-member, with
 * no organization active, and for an impersonated token.
 * @example
 * if (await hasPermission(event, 'doc:edit', { resource: doc })) showEditButton()
 */
export async function hasPermission(event: H3Event, permission: string, scope?: PermissionScope): Promise<boolean> {
  const ctx = await useAuthContext()
  const claims = await authenticate(event, ctx)
  return !!claims && await permitted(ctx, event, claims, permission, scope)
}

/**
 * {@link hasPermission} or an error: 401 (`unauthorized`, `session_revoked`, `session_stale`) without a valid
 * token, 403 `permission_denied` when the caller lacks the permission.
 * @returns The caller's claims.
 * @example
 * const user = await requirePermission(event, 'doc:edit', { resource: { id: doc.id, teamId: doc.teamId } })
 */
export async function requirePermission(event: H3Event, permission: string, scope?: PermissionScope) {
  const ctx = await useAuthContext()
  const claims = await authenticate(event, ctx)
  if (!claims) throw authenticationError(event)
  if (!await permitted(ctx, event, claims, permission, scope)) throw authError('permission_denied')
  return claims
}
