import { defineEventHandler, type EventHandler } from 'h3'

/**
 * Nitro's OpenAPI document route without the path items Nitro 2 makes of server middleware: they
 * have no route, so they come out under the key `''`, which is no path and makes the document
 * invalid (nitrojs/nitro#3989; the module's own middleware would cause it in every app).
 */
export function withoutMiddlewarePaths(handler: EventHandler): EventHandler {
  return defineEventHandler(async (event) => {
    const document = (await handler(event)) as { paths?: Record<string, unknown> } | undefined
    if (!document?.paths) return document
    return { ...document, paths: Object.fromEntries(Object.entries(document.paths).filter(([path]) => path.startsWith('/'))) }
  })
}
