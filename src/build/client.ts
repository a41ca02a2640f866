import { addImports, addPlugin, addRouteMiddleware, addTemplate, addTypeTemplate, extendPages } from '@nuxt/kit'
import type { NuxtPage } from '@nuxt/schema'
import { appTypeTemplate } from './type-template'
import type { SetupContext } from './setup-context'

function joinPath(parent: string, child: string): string {
  if (child.startsWith('/')) return child
  return `${parent.replace(/\/+$/, '')}/${child}`
}

/** True when the app already has a page at `path` (its own callback page replaces the module's). */
export function hasPageAt(pages: NuxtPage[], path: string, parent = ''): boolean {
  return pages.some((page) => {
    const full = joinPath(parent, page.path)
    return full === path || hasPageAt(page.children ?? [], path, full)
  })
}

/** `#build/svc-auth/client-options.mjs`: build-time options of the browser code, so the bundler drops what they turn off. */
export function clientOptionsModule(clientMiddleware: boolean): string {
  return `export const clientMiddleware = ${clientMiddleware}\n`
}

function pagesEnabled(pages: unknown): boolean {
  if (typeof pages === 'boolean') return pages
  return !(pages && typeof pages === 'object' && (pages as { enabled?: unknown }).enabled === false)
}

/** Client side: `useAuth`, the startup plugin, the callback page, the client middleware and the page meta type. */
export function setupClient({ nuxt, options, resolver, logger, callbackPage }: SetupContext): void {
  addTemplate({ filename: 'svc-auth/client-options.mjs', getContents: () => clientOptionsModule(options.clientMiddleware.enabled) })
  addTemplate({
    filename: 'svc-auth/client-options.d.mts',
    write: true,
    getContents: () => '/** `clientMiddleware.enabled`: the client middleware is registered. */\nexport declare const clientMiddleware: boolean\n',
  })
  addPlugin(resolver.resolve('./runtime/app/plugins/auth-plugin'))
  addImports([{ name: 'useAuth', from: resolver.resolve('./runtime/app/composables/useAuth') }])
  addTypeTemplate({ filename: 'types/svc-auth-app.d.ts', getContents: () => appTypeTemplate(resolver.resolve('./runtime/types/auth')) }, { nuxt: true })

  if (!pagesEnabled(nuxt.options.pages)) {
    logger.warn(`The app has no pages: the callback page (${options.endpoints.callbackPath}) and the client middleware need Nuxt pages. Handle the callback with useAuth().handleCallback(query).`)
    return
  }
  const callbackPath = options.endpoints.callbackPath
  extendPages((pages) => {
    if (hasPageAt(pages, callbackPath) || !callbackPage) return
    pages.push({ name: 'svc-auth-callback', path: callbackPath, file: callbackPage, _sync: true })
  })
  if (options.clientMiddleware.enabled) {
    addRouteMiddleware([
      { name: 'auth', path: resolver.resolve('./runtime/app/middleware/auth-required') },
      { name: 'guest', path: resolver.resolve('./runtime/app/middleware/guest-only') },
      { name: 'svc-auth', path: resolver.resolve('./runtime/app/middleware/route-guard'), global: true },
    ])
  }
}
