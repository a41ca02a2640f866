import { addImports, extendPages } from '@nuxt/kit'
import { addRoutes, twoFactorRoutes } from './module-routes'
import { isTwoFactorEnabled } from '../runtime/two-factor/server/two-factor-options'
import { hasPageAt } from './client'
import type { SetupContext } from './setup-context'

/** The second factor when `twoFactor.enabled`: its feature, routes, page and `useTwoFactor()`; off, nothing. */
export function setupTwoFactor({ nuxt, options, resolver, features }: SetupContext): void {
  if (!isTwoFactorEnabled(options)) return
  features.push(resolver.resolve('./runtime/two-factor/server/two-factor-feature'))
  addRoutes(resolver, twoFactorRoutes(options))
  addImports([{ name: 'useTwoFactor', from: resolver.resolve('./runtime/two-factor/app/useTwoFactor') }])
  if (nuxt.options.pages === false) return
  const path = options.endpoints.secondFactorPath
  extendPages((pages) => {
    if (hasPageAt(pages, path)) return
    pages.push({ name: 'svc-auth-second-factor', path, file: resolver.resolve('./runtime/two-factor/app/second-factor.vue') })
  })
}
