import { defineEventHandler, type EventHandler, type H3Event } from 'h3'
import { DEVTOOLS_ROUTE } from '../devtools/devtools-paths'
import { TEST_LOGIN_PATH } from './lib/core/test-login'

/**
 * True when a path of Nitro's OpenAPI document belongs in it. Not:
 * - the key `''`: Nitro 2 makes path items of server middleware, which have no route
 *   (nitrojs/nitro#3989; the module's own middleware would cause it in every app), and `''` is
 *   no path and makes the document invalid;
 * - the module's internal routes: the DevTools tab's (development only, {@link DEVTOOLS_ROUTE}
 *   and below) and the test-only login of a build made for tests ({@link TEST_LOGIN_PATH}).
 *
 * Nitro lists routes relative to `app.baseURL` (its `servers` entry carries the base); a path
 * that carries `baseURL` in front is recognized as well.
 */
export function isDocumentedPath(path: string, baseURL = '/'): boolean {
  if (!path.startsWith('/')) return false
  const base = baseURL.replace(/\/+$/, '')
  const candidates = base && path.startsWith(`${base}/`) ? [path, path.slice(base.length)] : [path]
  return !candidates.some(p => p === DEVTOOLS_ROUTE || p.startsWith(`${DEVTOOLS_ROUTE}/`) || p === TEST_LOGIN_PATH)
}

/**
 * Nitro's OpenAPI document route with only the paths that belong in it ({@link isDocumentedPath}).
 * `baseURLOf` gives the app's base URL of a request (the runtime config's `app.baseURL`).
 */
export function withoutInternalPaths(handler: EventHandler, baseURLOf: (event: H3Event) => string = () => '/'): EventHandler {
  return defineEventHandler(async (event) => {
    const document = (await handler(event)) as { paths?: Record<string, unknown> } | undefined
    if (!document?.paths) return document
    const baseURL = baseURLOf(event)
    return { ...document, paths: Object.fromEntries(Object.entries(document.paths).filter(([path]) => isDocumentedPath(path, baseURL))) }
  })
}
