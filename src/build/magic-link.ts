import { addImports, extendPages } from '@nuxt/kit'
import { isMagicLinkEnabled, validateMagicLinkOptions } from '../runtime/magic-link/server/magic-link-options'
import { formatValidationErrors } from '../runtime/server/lib/config/validate-options'
import { addRoutes, magicLinkRoutes } from './module-routes'
import { hasPageAt } from './client'
import type { SetupContext } from './setup-context'

/** The browser side of magic links (asking, typing the short code), under src/. */
export const MAGIC_LINK_CLIENT = './runtime/magic-link/app/magic-link-client'

/** Login links when `providers.magicLink` is set: routes, the link's page, `useMagicLink()` and `login('magicLink')`; off, nothing. */
export function setupMagicLink({ nuxt, options, resolver, clientFeatures }: SetupContext): void {
  const input = options.providers.magicLink
  if (!isMagicLinkEnabled(input)) return
  const errors = validateMagicLinkOptions(input)
  if (errors.length) throw new Error(formatValidationErrors(errors))
  addRoutes(resolver, magicLinkRoutes(options))
  clientFeatures.magicLink = resolver.resolve(MAGIC_LINK_CLIENT)
  addImports([{ name: 'useMagicLink', from: resolver.resolve('./runtime/magic-link/app/useMagicLink') }])
  if (nuxt.options.pages === false) return
  const path = options.endpoints.magicLinkPath
  extendPages((pages) => {
    if (hasPageAt(pages, path)) return
    pages.push({ name: 'svc-auth-magic-link', path, file: resolver.resolve('./runtime/magic-link/app/magic-link-page.vue') })
  })
}
