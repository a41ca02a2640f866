import { addImports, addServerHandler, extendPages } from '@nuxt/kit'
import { twoFactorRoutes } from '../runtime/server/lib/module-routes'
import { isTwoFactorEnabled } from '../runtime/server/lib/two-factor/options'
import { hasPageAt } from './client'
import type { SetupContext } from './setup-context'

/**
 * The second factor, when `twoFactor.enabled` (its options are checked with the others by
 * `validateOptions`): the routes under `<authPath>/two-factor/`, the second-factor page at
 * `endpoints.secondFactorPath` (unless the app has a page there) and the auto-imported
 * `useTwoFactor()`. Off, nothing of it is added: no route, no page, no client code.
 */
export function setupTwoFactor({ nuxt, options, resolver }: SetupContext): void {
  if (!isTwoFactorEnabled(options)) return
  for (const route of twoFactorRoutes(options)) {
    addServerHandler({ route: route.route, method: route.method, handler: resolver.resolve(`./runtime/server/routes/${route.handler}`) })
  }
  addImports([{ name: 'useTwoFactor', from: resolver.resolve('./runtime/app/composables/useTwoFactor') }])
  if (nuxt.options.pages === false) return
  const path = options.endpoints.secondFactorPath
  extendPages((pages) => {
    if (hasPageAt(pages, path)) return
    pages.push({ name: 'svc-auth-second-factor', path, file: resolver.resolve('./runtime/app/pages/second-factor.vue') })
  })
}
