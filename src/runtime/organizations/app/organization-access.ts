/**
 * The browser side of permissions (`organizations` on): `useAuth().can()`, the page guard of `auth: { permission }`
 * and `auth: { role }`, and which endpoints refresh on a 401. In the core client's chunk through
 * `#build/svc-auth/client-features.mjs`; a build without organizations has none of it.
 */
import type { AuthClaims } from '../../types/auth'
import type { EndpointOptions } from '../../types/options'
import { createAccessCheck, type AccessCheck } from '../../shared/access-check'
import { isPathUnder, joinBase, normalizePath, underPath } from '../../shared/paths'
import { rolesGrant, type RoleTable } from '../../shared/permissions'
import { isAuthEndpoint as isCoreAuthEndpoint } from '../../app/lib/route-paths'
import { usePageTexts } from '../../app/lib/use-page-texts'
import { ACCESS_TEXTS } from '../../shared/page-texts'

/** The compiled page rules of each role table (one table per app). */
const checks = new WeakMap<RoleTable, AccessCheck>()

/** The role of the active organization in the claims, or undefined (none active, an impersonated token). */
function roleOf(claims: AuthClaims | null | undefined): string | undefined {
  return typeof claims?.orgRole === 'string' ? claims.orgRole : undefined
}

/** True when the role of the active organization in `claims` grants `permission` (`useAuth().can()`). */
export function can(table: RoleTable | undefined, claims: AuthClaims | null | undefined, permission: string): boolean {
  const role = roleOf(claims)
  return !!table && role !== undefined && rolesGrant(table, [role], permission)
}

/** The page's `auth` meta when it asks for a permission or a role (an object), else undefined. */
export function accessRuleOf(meta: unknown): object | undefined {
  const auth = meta && typeof meta === 'object' ? (meta as { auth?: unknown }).auth : undefined
  return auth && typeof auth === 'object' ? auth : undefined
}

/** True when the role of the active organization in `claims` meets the page's rule (compiled once per rule). */
export function meets(table: RoleTable | undefined, claims: AuthClaims | null | undefined, rule: object): boolean {
  if (!table) return false
  let check = checks.get(table)
  if (!check) {
    check = createAccessCheck(table)
    checks.set(table, check)
  }
  return check(rule, roleOf(claims))
}

/**
 * The error of a page the user may not open (the guard shows Nuxt's error page with it): a 403, `data.error`
 * `permission_denied`, its texts in the app's locale.
 */
export function permissionDenied() {
  const t = usePageTexts(ACCESS_TEXTS)
  return { statusCode: 403, statusMessage: t('access_forbidden'), message: t('access_permission_denied'), data: { error: 'permission_denied' }, fatal: true }
}

/**
 * The core's authentication endpoints, but `<authPath>/orgs/**` are ordinary APIs: a 401 there (`session_stale`
 * after a role change, an expired token) refreshes once and retries, as at the host's own routes.
 */
export function isAuthEndpoint(request: string, endpoints: EndpointOptions, baseURL?: string): boolean {
  const orgs = typeof endpoints.authPath === 'string' ? underPath(endpoints.authPath, 'orgs') : undefined
  if (orgs && isPathUnder(normalizePath(baseURL ? joinBase(baseURL, request) : request), orgs)) return false
  return isCoreAuthEndpoint(request, endpoints, baseURL)
}
