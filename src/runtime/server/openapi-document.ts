import { defineEventHandler, type EventHandler, type H3Event } from 'h3'
import { DEVTOOLS_ROUTE } from '../devtools/devtools-paths'
import { TEST_LOGIN_PATH } from './lib/core/test-login'

/**
 * False for the key `''` (Nitro 2 lists server middleware without a route, nitrojs/nitro#3989: an
 * invalid document) and the module's internal routes, with or without `baseURL` in front.
 */
export function isDocumentedPath(path: string, baseURL = '/'): boolean {
  if (!path.startsWith('/')) return false
  const base = baseURL.replace(/\/+$/, '')
  const candidates = base && path.startsWith(`${base}/`) ? [path, path.slice(base.length)] : [path]
  return !candidates.some(p => p === DEVTOOLS_ROUTE || p.startsWith(`${DEVTOOLS_ROUTE}/`) || p === TEST_LOGIN_PATH)
}

/** Nitro's OpenAPI document route with only the paths that belong in it ({@link isDocumentedPath}). */
export function withoutInternalPaths(handler: EventHandler, baseURLOf: (event: H3Event) => string = () => '/'): EventHandler {
  return defineEventHandler(async (event) => {
    const document = (await handler(event)) as { paths?: Record<string, unknown> } | undefined
    if (!document?.paths) return document
    const baseURL = baseURLOf(event)
    return { ...document, paths: Object.fromEntries(Object.entries(document.paths).filter(([path]) => isDocumentedPath(path, baseURL))) }
  })
}
