import { addRoutes, organizationRoutes } from './module-routes'
import { isOrganizationsEnabled } from '../runtime/organizations/server/organizations-options'
import type { SetupContext } from './setup-context'

/** Organizations when `organizations` is set: their feature and routes; off, nothing. */
export function setupOrganizations({ options, resolver, features }: SetupContext): void {
  if (!isOrganizationsEnabled(options)) return
  features.push(resolver.resolve('./runtime/organizations/server/organizations-feature'))
  addRoutes(resolver, organizationRoutes(options))
}
