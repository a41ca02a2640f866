import { addImports } from '@nuxt/kit'
import { isIdentitiesEnabled, validateIdentitiesOptions } from '../runtime/identities/server/identities-options'
import { oauthProviderNames } from '../runtime/oauth/server/provider-registry'
import { formatValidationErrors } from '../runtime/server/lib/config/validate-options'
import { addRoutes, identityRoutes } from './module-routes'
import type { SetupContext } from './setup-context'

/**
 * Linked identities when `identities` is set: their feature (the identity of every provider login, the end of a
 * link's provider login), routes and `useLinkedAccounts()`; off, nothing.
 */
export function setupIdentities(ctx: SetupContext): void {
  if (!isIdentitiesEnabled(ctx.options)) return
  const errors = validateIdentitiesOptions(ctx.options)
  if (errors.length) throw new Error(formatValidationErrors(errors))
  if (!oauthProviderNames(ctx.options.providers).length) {
    ctx.logger.warn('svcAuth.identities is set but no OAuth provider is configured: there is nothing to link.')
    return
  }
  ctx.features.push(ctx.resolver.resolve('./runtime/identities/server/identities-feature'))
  addRoutes(ctx.resolver, identityRoutes(ctx.options))
  addImports([{ name: 'useLinkedAccounts', from: ctx.resolver.resolve('./runtime/identities/app/useLinkedAccounts') }])
}
