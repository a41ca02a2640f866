import { addImports, addServerImports, extendPages } from '@nuxt/kit'
import { addRoutes, organizationRoutes } from './module-routes'
import { isOrganizationsEnabled, validateOrganizationsOptions } from '../runtime/organizations/server/organizations-options'
import { formatValidationErrors } from '../runtime/server/lib/config/validate-options'
import { toPublicConfig } from './resolve-options'
import { hasPageAt } from './client'
import type { SetupContext } from './setup-context'

/** The browser side of permissions (`useAuth().can()`, the page guard of permissions and roles), under src/. */
export const ORGANIZATIONS_CLIENT = './runtime/organizations/app/organization-access'

/**
 * Organizations when `organizations` is set: their feature (claims of the active organization, stale marks),
 * routes, the server utils `requirePermission` and `hasPermission`, page and `useOrganizations()`; off, nothing.
 */
export function setupOrganizations(ctx: SetupContext): void {
  if (!isOrganizationsEnabled(ctx.options)) return
  const errors = validateOrganizationsOptions(ctx.options)
  if (errors.length) throw new Error(formatValidationErrors(errors))
  ctx.features.push(ctx.resolver.resolve('./runtime/organizations/server/organizations-feature'))
  addRoutes(ctx.resolver, organizationRoutes(ctx.options))
  const permissionUtils = ctx.resolver.resolve('./runtime/organizations/server/utils/require-permission')
  addServerImports([
    { name: 'requirePermission', from: permissionUtils },
    { name: 'hasPermission', from: permissionUtils },
  ])
  setupOrganizationsClient(ctx)
}

/**
 * The client side of organizations when `organizations` is set: `useOrganizations()`, the invitation page,
 * and the code of `useAuth().can()` and the page guard; off, nothing.
 */
export function setupOrganizationsClient({ nuxt, options, resolver, clientFeatures }: SetupContext): void {
  if (!isOrganizationsEnabled(options)) return
  clientFeatures.organizations = resolver.resolve(ORGANIZATIONS_CLIENT)
  addImports([{ name: 'useOrganizations', from: resolver.resolve('./runtime/organizations/app/useOrganizations') }])
  const path = toPublicConfig(options).organizations?.invitationPath
  if (nuxt.options.pages === false || !path) return
  extendPages((pages) => {
    if (hasPageAt(pages, path)) return
    pages.push({ name: 'svc-auth-invitation', path, file: resolver.resolve('./runtime/organizations/app/invitation.vue') })
  })
}
