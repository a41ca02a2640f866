import { addImports, extendPages } from '@nuxt/kit'
import { addRoutes, organizationRoutes } from './module-routes'
import { isOrganizationsEnabled } from '../runtime/organizations/server/organizations-options'
import { toPublicConfig } from './resolve-options'
import { hasPageAt } from './client'
import type { SetupContext } from './setup-context'

/** Organizations when `organizations` is set: their feature, routes, page and `useOrganizations()`; off, nothing. */
export function setupOrganizations(ctx: SetupContext): void {
  if (!isOrganizationsEnabled(ctx.options)) return
  ctx.features.push(ctx.resolver.resolve('./runtime/organizations/server/organizations-feature'))
  addRoutes(ctx.resolver, organizationRoutes(ctx.options))
  setupOrganizationsClient(ctx)
}

/** The client side of organizations when `organizations` is set: `useOrganizations()` and the invitation page; off, nothing. */
export function setupOrganizationsClient({ nuxt, options, resolver }: SetupContext): void {
  if (!isOrganizationsEnabled(options)) return
  addImports([{ name: 'useOrganizations', from: resolver.resolve('./runtime/organizations/app/useOrganizations') }])
  const path = toPublicConfig(options).organizations?.invitationPath
  if (nuxt.options.pages === false || !path) return
  extendPages((pages) => {
    if (hasPageAt(pages, path)) return
    pages.push({ name: 'svc-auth-invitation', path, file: resolver.resolve('./runtime/organizations/app/invitation.vue') })
  })
}
