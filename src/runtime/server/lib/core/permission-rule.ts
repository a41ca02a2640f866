/** The permission and role rules of `auth` route rules (`{ permission }`, `{ role }`), checked on the token's `orgRole`. */
import type { AuthClaims } from '../../../types/auth'
import { createAccessCheck, type AccessCheck } from '../../../shared/access-check'
import { authError } from '../edge/errors'
import type { AuthContext } from './context'

/** The compiled checks of each context (its role table is fixed once it starts). */
const checks = new WeakMap<AuthContext, AccessCheck>()

/**
 * Throws 403 `permission_denied` unless the role of the active organization (`orgRole` of the claims) meets
 * the rule: no organization active, an impersonated token (it carries none) and a build without organizations
 * (no roles) are refused alike.
 */
export function requireAccessRule(ctx: AuthContext, rule: object, claims: AuthClaims): void {
  let check = checks.get(ctx)
  if (!check) {
    check = createAccessCheck(ctx.options.organizations?.roles ?? {})
    checks.set(ctx, check)
  }
  if (!check(rule, claims.orgRole)) throw authError('permission_denied')
}
