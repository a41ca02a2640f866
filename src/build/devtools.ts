import { addDevServerHandler, addPlugin, addServerHandler, addServerPlugin } from '@nuxt/kit'
import type { Nuxt } from '@nuxt/schema'
import { devtoolsGate } from '../runtime/devtools/server/devtools-http'
import { TAB_ASSETS } from '../runtime/devtools/server/tab-page'
import { DEVTOOLS_API, DEVTOOLS_ROUTE, DEVTOOLS_TAB } from '../runtime/devtools/devtools-paths'
import { joinBase } from '../runtime/shared/paths'
import { isAuditEnabled } from '../runtime/audit/server/audit-options'
import type { ModuleOptions } from '../runtime/types/options'
import type { SetupContext } from './setup-context'

/** Whether Nuxt DevTools runs: in development, unless `devtools: false` or `devtools: { enabled: false }`. */
export function devtoolsEnabled(nuxt: Pick<Nuxt, 'options'>): boolean {
  if (!nuxt.options.dev) return false
  const devtools: unknown = nuxt.options.devtools
  if (typeof devtools === 'boolean') return devtools
  return (devtools as { enabled?: unknown } | undefined)?.enabled !== false
}

/** The DevTools tab's server routes (page and JSON) at their paths under the app's base URL; the audit panel's when `audit` is set. */
export function devtoolsRoutes(options: Pick<ModuleOptions, 'audit'>): Array<{ route: string, method: 'get' | 'delete', handler: string }> {
  return [
    { route: DEVTOOLS_ROUTE, method: 'get', handler: 'page.get' },
    { route: `${DEVTOOLS_ROUTE}${DEVTOOLS_API.events}`, method: 'get', handler: 'events.get' },
    { route: `${DEVTOOLS_ROUTE}${DEVTOOLS_API.events}`, method: 'delete', handler: 'events.delete' },
    { route: `${DEVTOOLS_ROUTE}${DEVTOOLS_API.options}`, method: 'get', handler: 'options.get' },
    ...(isAuditEnabled(options) ? [{ route: `${DEVTOOLS_ROUTE}${DEVTOOLS_API.audit}`, method: 'get' as const, handler: 'audit.get' }] : []),
  ]
}

/** The DevTools tab, in development with Nuxt DevTools only (production has none of it). */
export async function setupDevtools({ nuxt, options, resolver }: SetupContext): Promise<void> {
  if (!devtoolsEnabled(nuxt)) return
  const { addCustomTab } = await import('@nuxt/devtools-kit')
  for (const route of devtoolsRoutes(options)) {
    addServerHandler({ route: route.route, method: route.method, handler: resolver.resolve(`./runtime/devtools/server/routes/${route.handler}`) })
  }
  addDevServerHandler({ route: joinBase(nuxt.options.app.baseURL, DEVTOOLS_ROUTE), handler: devtoolsGate })
  addServerPlugin(resolver.resolve('./runtime/devtools/server/devtools-plugin'))
  addPlugin({ src: resolver.resolve('./runtime/devtools/app/bridge'), mode: 'client' }, { append: true })
  nuxt.hook('nitro:config', (config) => {
    config.serverAssets ??= []
    config.serverAssets.push({ baseName: TAB_ASSETS.base, dir: resolver.resolve('./runtime/devtools/app') })
  })
  addCustomTab({
    name: DEVTOOLS_TAB,
    title: 'Auth',
    icon: 'carbon:user-identification',
    view: { type: 'iframe', src: joinBase(nuxt.options.app.baseURL, DEVTOOLS_ROUTE) },
  }, nuxt)
}
