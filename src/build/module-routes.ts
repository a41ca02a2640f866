import { addServerHandler, type Resolver } from '@nuxt/kit'
import type { EndpointOptions, ModuleOptions } from '../runtime/types/options'
import type { RouteContract } from '../runtime/server/lib/edge/route-contract'
import { CORE_ROUTES } from '../runtime/server/core-routes'
import { IMPERSONATION_ROUTES } from '../runtime/impersonation/server/impersonation-routes'
import { OAUTH_ROUTES } from '../runtime/oauth/server/oauth-routes'
import { oauthProviderNames } from '../runtime/oauth/server/provider-registry'
import { isPasswordEnabled } from '../runtime/password/server/password-options'
import { PASSWORD_ROUTES } from '../runtime/password/server/password-routes'
import { isTwoFactorEnabled } from '../runtime/two-factor/server/two-factor-options'
import { TWO_FACTOR_ROUTES } from '../runtime/two-factor/server/two-factor-routes'
import { isPasskeyEnabled } from '../runtime/passkey/server/passkey-options'
import { PASSKEY_ROUTES } from '../runtime/passkey/server/passkey-routes'
import { isMagicLinkEnabled } from '../runtime/magic-link/server/magic-link-options'
import { MAGIC_LINK_ROUTES } from '../runtime/magic-link/server/magic-link-routes'
import { isOrganizationsEnabled } from '../runtime/organizations/server/organizations-options'
import { ORGANIZATION_ROUTES } from '../runtime/organizations/server/organizations-routes'
import { auditAdminPage, isAuditEnabled } from '../runtime/audit/server/audit-options'
import { AUDIT_ROUTES } from '../runtime/audit/server/audit-routes'
import { AUDIT_ADMIN_ROUTES } from '../runtime/audit/server/admin-routes'
import { isNativeEnabled } from '../runtime/native/server/native-options'
import { NATIVE_ROUTES } from '../runtime/native/server/native-routes'
import { isIdentitiesEnabled } from '../runtime/identities/server/identities-options'
import { IDENTITY_ROUTES } from '../runtime/identities/server/identities-routes'

/** A server endpoint of the module. */
export interface ServerRoute {
  /** Path as Nitro registers it (`:name` matches one segment). */
  route: string
  method: 'get' | 'post' | 'put' | 'patch' | 'delete'
  /** The handler's file under `src/runtime`, without its extension. */
  handler: string
}

type ContractGroup = Record<string, RouteContract | readonly RouteContract[]>
const contractsOf = (group: ContractGroup): RouteContract[] => Object.values(group).flat()
const routesOf = (contracts: RouteContract[], e: EndpointOptions): ServerRoute[] =>
  contracts.map(c => ({ route: c.path(e), method: c.method, handler: c.handler }))

/** Every route contract of the module, by method and handler file (`post server/routes/token.post`). */
export const ROUTE_CONTRACTS = new Map([CORE_ROUTES, IMPERSONATION_ROUTES, OAUTH_ROUTES, PASSWORD_ROUTES, TWO_FACTOR_ROUTES, PASSKEY_ROUTES, MAGIC_LINK_ROUTES, ORGANIZATION_ROUTES, AUDIT_ROUTES, AUDIT_ADMIN_ROUTES, NATIVE_ROUTES, IDENTITY_ROUTES]
  .flatMap(contractsOf).map(c => [`${c.method} ${c.handler}`, c]))

/** The contract of a route, or undefined for a handler that is not one of the module's API. */
export function contractOf(route: Pick<ServerRoute, 'method' | 'handler'>): RouteContract | undefined {
  return ROUTE_CONTRACTS.get(`${route.method} ${route.handler}`)
}

/** The module's own endpoints (tokens, user, keys, impersonation, sessions) at their configured paths. */
export function coreRoutes(e: EndpointOptions): ServerRoute[] {
  const { listSessions, revokeOthers, revokeSession, ...tokens } = CORE_ROUTES
  return routesOf([...Object.values(tokens), ...contractsOf(IMPERSONATION_ROUTES), listSessions, revokeOthers, revokeSession], e)
}

/** {@link coreRoutes} at the configured paths; two routes of one method on one path are refused. */
export function serverRoutes(options: ModuleOptions): ServerRoute[] {
  const routes = coreRoutes(options.endpoints)
  const seen = new Map<string, string>()
  for (const r of routes) {
    const key = `${r.method} ${r.route}`
    const other = seen.get(key)
    if (other) throw new Error(`[svc-auth] svcAuth.endpoints: ${routeName(r.handler)} and ${routeName(other)} share ${key.toUpperCase()}`)
    seen.set(key, r.handler)
  }
  return routes
}

/** A handler's file name (`refresh.post`), as messages name a route. */
const routeName = (handler: string) => handler.slice(handler.lastIndexOf('/') + 1)

/** Registers routes with Nitro, each served by its handler file under `runtime/`. */
export function addRoutes(resolver: Resolver, routes: ServerRoute[]): void {
  for (const route of routes) addServerHandler({ route: route.route, method: route.method, handler: resolver.resolve(`./runtime/${route.handler}`) })
}

/** Handler of the automatic `GET <loginPath>/<name>` route of an OAuth provider. */
export const OAUTH_LOGIN_HANDLER = OAUTH_ROUTES.login.handler

/**
 * `GET <loginPath>/<name>` for every configured provider, the back-channel logout when a provider other than
 * the mock is configured, and the mock provider's endpoints when configured.
 */
export function oauthRoutes(options: Pick<ModuleOptions, 'endpoints' | 'providers'>): ServerRoute[] {
  const { login, backchannelLogout, ...mock } = OAUTH_ROUTES
  const base = login.path(options.endpoints)
  const names = oauthProviderNames(options.providers)
  const routes: ServerRoute[] = names.map(name => ({ route: `${base}/${name}`, method: login.method, handler: login.handler }))
  if (names.some(name => name !== 'mock')) routes.push(...routesOf([backchannelLogout], options.endpoints))
  return options.providers?.mock ? [...routes, ...routesOf(contractsOf(mock), options.endpoints)] : routes
}

/** The password provider's routes under `<authPath>/password/`, when the provider is on. */
export function passwordRoutes(options: Pick<ModuleOptions, 'endpoints' | 'providers'>): ServerRoute[] {
  return isPasswordEnabled(options.providers?.password) ? routesOf(contractsOf(PASSWORD_ROUTES), options.endpoints) : []
}

/** Options that decide the module's routes (`twoFactor`, `organizations` and `audit` may be absent: off). */
export type RouteOptions = Pick<ModuleOptions, 'endpoints' | 'providers'> & Partial<Pick<ModuleOptions, 'twoFactor' | 'organizations' | 'audit' | 'native' | 'identities'>>

/** The second factor's routes under `<authPath>/two-factor/`, when `twoFactor.enabled`. */
export function twoFactorRoutes(options: RouteOptions): ServerRoute[] {
  return isTwoFactorEnabled(options) ? routesOf(contractsOf(TWO_FACTOR_ROUTES), options.endpoints) : []
}

/** The passkey provider's routes under `<authPath>/passkey/`, when the provider is on. */
export function passkeyRoutes(options: Pick<ModuleOptions, 'endpoints' | 'providers'>): ServerRoute[] {
  return isPasskeyEnabled(options.providers?.passkey) ? routesOf(contractsOf(PASSKEY_ROUTES), options.endpoints) : []
}

/** The magic-link provider's routes under `<authPath>/magic-link`, when the provider is on. */
export function magicLinkRoutes(options: Pick<ModuleOptions, 'endpoints' | 'providers'>): ServerRoute[] {
  return isMagicLinkEnabled(options.providers?.magicLink) ? routesOf(contractsOf(MAGIC_LINK_ROUTES), options.endpoints) : []
}

/** The routes of organizations under `<authPath>/orgs/` and `<authPath>/invitations/`, when `organizations` is set. */
export function organizationRoutes(options: RouteOptions): ServerRoute[] {
  return isOrganizationsEnabled(options) ? routesOf(contractsOf(ORGANIZATION_ROUTES), options.endpoints) : []
}

/** The routes of the audit log (`<authPath>/audit`, `<authPath>/audit/export`, `<authPath>/me/activity`), when `audit` is set. */
export function auditRoutes(options: RouteOptions): ServerRoute[] {
  return isAuditEnabled(options) ? routesOf(contractsOf(AUDIT_ROUTES), options.endpoints) : []
}

/** The admin page's endpoints under `<authPath>/audit/users`, when `audit.adminPage` is set. */
export function auditAdminRoutes(options: RouteOptions): ServerRoute[] {
  return auditAdminPage(options) ? routesOf(contractsOf(AUDIT_ADMIN_ROUTES), options.endpoints) : []
}

/** The native endpoints under `<authPath>/native/`, when `native` is set (the login route only with an OAuth provider). */
export function nativeRoutes(options: RouteOptions): ServerRoute[] {
  if (!isNativeEnabled(options)) return []
  const { login, ...grants } = NATIVE_ROUTES
  return routesOf([...Object.values(grants), ...(oauthProviderNames(options.providers).length ? [login] : [])], options.endpoints)
}

/** The routes of linked identities (`<authPath>/link/:provider`, `<authPath>/links`), when `identities` is set and an OAuth provider is configured. */
export function identityRoutes(options: RouteOptions): ServerRoute[] {
  return isIdentitiesEnabled(options) && oauthProviderNames(options.providers).length ? routesOf(contractsOf(IDENTITY_ROUTES), options.endpoints) : []
}

/** Every path the module answers on for these options: its routes, the callback page, the second factor's and the magic link's pages. */
export function moduleRoutePaths(options: RouteOptions): string[] {
  const routes = [...coreRoutes(options.endpoints), ...oauthRoutes(options), ...passwordRoutes(options), ...passkeyRoutes(options), ...magicLinkRoutes(options), ...twoFactorRoutes(options), ...organizationRoutes(options), ...auditRoutes(options), ...auditAdminRoutes(options), ...nativeRoutes(options), ...identityRoutes(options)]
  const pages = [options.endpoints.callbackPath, ...(isTwoFactorEnabled(options) ? [options.endpoints.secondFactorPath] : []), ...(isMagicLinkEnabled(options.providers?.magicLink) ? [options.endpoints.magicLinkPath] : []), ...(isOrganizationsEnabled(options) ? [options.organizations.invitationPath ?? '/auth/invitation'] : [])]
  return [...routes.map(route => route.route), ...pages]
}
