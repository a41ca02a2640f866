import { addServerImports } from '@nuxt/kit'
import { isOrganizationsEnabled, validateOrganizationsOptions } from '../runtime/organizations/server/organizations-options'
import { formatValidationErrors } from '../runtime/server/lib/config/validate-options'
import { addRoutes, organizationRoutes } from './module-routes'
import type { SetupContext } from './setup-context'

/** The browser side of organizations (`useAuth().can()`, the page guard of permissions and roles), under src/. */
export const ORGANIZATIONS_CLIENT = './runtime/organizations/app/organization-access'

/**
 * Organizations when `organizations` is set: the core feature (claims of the active organization, stale
 * marks), the routes, the server utils `requirePermission` and `hasPermission`, and the client code of
 * permissions; off, nothing.
 */
export function setupOrganizations({ options, resolver, features, clientFeatures }: SetupContext): void {
  if (!isOrganizationsEnabled(options)) return
  const errors = validateOrganizationsOptions(options)
  if (errors.length) throw new Error(formatValidationErrors(errors))
  features.push(resolver.resolve('./runtime/organizations/server/organizations-feature'))
  addRoutes(resolver, organizationRoutes(options))
  const permissionUtils = resolver.resolve('./runtime/organizations/server/utils/require-permission')
  addServerImports([
    { name: 'requirePermission', from: permissionUtils },
    { name: 'hasPermission', from: permissionUtils },
  ])
  clientFeatures.organizations = resolver.resolve(ORGANIZATIONS_CLIENT)
}
