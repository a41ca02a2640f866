import { relative } from 'node:path'
import { addTemplate } from '@nuxt/kit'
import { pascalCase } from 'scule'
import { z } from 'zod'
import { ERRORS, type AuthErrorCode } from '../runtime/server/lib/edge/errors'
import { contractOf, OAUTH_LOGIN_HANDLER, type ServerRoute } from './module-routes'
import { errorResponse } from '../runtime/server/lib/edge/response-schemas'
import type { ModuleOptions } from '../runtime/types/options'
import { guardErrors, type RouteContract } from '../runtime/server/lib/edge/route-contract'
import type { SetupContext } from './setup-context'

/** A JSON value: what Nitro can read back from the literal of `defineRouteMeta`. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }

/** Tag of every route of the module in the document. */
export const OPENAPI_TAG = 'Auth'
/** Name of the bearer scheme in `components.securitySchemes`. */
export const BEARER_SCHEME = 'svcAuthBearer'

const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete'])
const MEDIA_TYPES = { json: 'application/json', form: 'application/x-www-form-urlencoded', lines: 'application/x-ndjson' } as const

/** JSON Schema (2020-12, as OpenAPI 3.1 uses) of a zod schema: the input side for requests, the output side for answers. */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'throw' }) as JsonObject
  return rest
}

/** Nitro's options that decide whether `/_openapi.json` is served (as nitropack's resolveOpenAPIOptions reads them). */
export interface NitroOpenAPIOptions {
  dev?: boolean
  experimental?: { openAPI?: boolean }
  openAPI?: { production?: false | 'runtime' | 'prerender' }
}

/** True when Nitro serves an OpenAPI document: `experimental.openAPI`, in dev or with `openAPI.production`. */
export function isOpenAPIServed(nitro: NitroOpenAPIOptions): boolean {
  return nitro.experimental?.openAPI === true && (nitro.dev === true || Boolean(nitro.openAPI?.production))
}

/** The error codes of a route: its guards', its handler's, then the ones every route may answer with. */
export function errorCodesOf(route: ServerRoute, doc: RouteContract): AuthErrorCode[] {
  const common: AuthErrorCode[] = [...(BODY_METHODS.has(route.method) ? ['payload_too_large' as const] : []), 'internal_error']
  return [...new Set([...guardErrors(doc), ...doc.errors, ...common])]
}

/** One response per status: the codes of that status, their messages, and the body narrowed to them. */
function errorResponses(codes: AuthErrorCode[]): Record<string, JsonObject> {
  const byStatus = new Map<number, AuthErrorCode[]>()
  for (const code of codes) byStatus.set(ERRORS[code].status, [...(byStatus.get(ERRORS[code].status) ?? []), code])
  const base = jsonSchemaOf(errorResponse, 'output')
  const answers: Record<string, JsonObject> = {}
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const schema = { ...base, properties: { ...(base.properties as JsonObject), statusCode: { type: 'integer', const: status }, error: { type: 'string', enum: list } } }
    answers[String(status)] = {
      description: list.map(code => `\`${code}\`: ${ERRORS[code].message}`).join('; '),
      content: { [MEDIA_TYPES.json]: { schema } },
    }
  }
  return answers
}

/** Path, query and cookie parameters of a route. */
function parametersOf(route: ServerRoute, doc: RouteContract, options: ModuleOptions): JsonObject[] {
  const parameters: JsonObject[] = []
  for (const [, name] of route.route.matchAll(/:(\w+)/g)) {
    const schema = doc.params?.[name!]
    parameters.push({ name: name!, in: 'path', required: true, schema: schema ? jsonSchemaOf(schema, 'input') : { type: 'string' } })
  }
  if (doc.query) {
    const schema = jsonSchemaOf(doc.query, 'input')
    const required = new Set((schema.required as string[] | undefined) ?? [])
    for (const [name, property] of Object.entries((schema.properties as JsonObject | undefined) ?? {})) {
      parameters.push({ name, in: 'query', required: required.has(name), schema: property })
    }
  }
  if (doc.auth === 'refreshCookie' || doc.auth === 'bearerAndRefreshCookie') {
    parameters.push({
      name: options.tokenRefresh.cookie.cookieName,
      in: 'cookie',
      required: doc.auth === 'bearerAndRefreshCookie',
      description: 'The HttpOnly refresh cookie (the browser sends it; scripts cannot read it)',
      schema: { type: 'string', maxLength: 512 },
    })
  }
  return parameters
}

/** The `openAPI` route meta of one module route, derived from its contract's zod schemas and `ERRORS`. */
export function routeOperation(route: ServerRoute, doc: RouteContract, options: ModuleOptions): JsonObject {
  const provider = route.handler === OAUTH_LOGIN_HANDLER ? route.route.split('/').pop() ?? '' : undefined
  const bodyTypes = doc.bodyTypes ?? ['json']
  const ok: Record<string, JsonObject> = {}
  if (doc.ok) {
    ok['200'] = {
      description: doc.ok.description,
      content: { [MEDIA_TYPES[doc.ok.lines ? 'lines' : 'json']]: { schema: jsonSchemaOf(doc.ok.schema, 'output') } },
      ...(doc.ok.setsRefreshCookie ? { headers: { 'Set-Cookie': { description: 'The HttpOnly refresh cookie', schema: { type: 'string' } } } } : {}),
    }
  }
  if (doc.redirect) ok['302'] = { description: `Redirect to ${doc.redirect}`, headers: { Location: { schema: { type: 'string' } } } }
  const operation: JsonObject = {
    tags: [OPENAPI_TAG],
    operationId: `svcAuth${doc.id}${provider === undefined ? '' : pascalCase(provider)}`,
    summary: provider === undefined ? doc.summary : `Log in with ${provider}`,
    description: doc.description,
    parameters: parametersOf(route, doc, options),
    ...(doc.body
      ? { requestBody: { required: true, content: Object.fromEntries(bodyTypes.map(type => [MEDIA_TYPES[type], { schema: jsonSchemaOf(doc.body!, 'input') }])) } }
      : {}),
    responses: { ...ok, ...errorResponses(errorCodesOf(route, doc)) },
  }
  if (doc.auth === 'bearer' || doc.auth === 'bearerAndRefreshCookie') {
    operation.security = [{ [BEARER_SCHEME]: [] }]
    operation.$global = { components: { securitySchemes: { [BEARER_SCHEME]: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Access token of nuxt-svc-auth' } } } }
  }
  return operation
}

/** Throws unless Nitro reads `value` back from a literal (a negative or non-finite number would be lost). */
export function assertLiteralJson(value: Json, at = 'meta'): void {
  if (typeof value === 'number' && !(Number.isFinite(value) && value >= 0 && !Object.is(value, -0))) {
    throw new Error(`[svc-auth] OpenAPI meta: ${at} is ${value}, which Nitro cannot read from a literal`)
  }
  if (Array.isArray(value)) value.forEach((item, i) => assertLiteralJson(item, `${at}[${i}]`))
  else if (value && typeof value === 'object') for (const [key, item] of Object.entries(value)) assertLiteralJson(item, `${at}.${key}`)
}

/** The module's handler re-exported with its `defineRouteMeta(...)` (a local no-op Nitro reads at build time). */
export function routeMetaModule(route: ServerRoute, handlerPath: string, operation: JsonObject): string {
  const meta: JsonObject = { openAPI: operation }
  assertLiteralJson(meta)
  return [
    `// Generated by nuxt-svc-auth: ${route.method.toUpperCase()} ${route.route} with its OpenAPI description.`,
    `export { default } from ${JSON.stringify(handlerPath)}`,
    'function defineRouteMeta(meta) { return meta }',
    `defineRouteMeta(${JSON.stringify(meta)})`,
    '',
  ].join('\n')
}

/** File name (in the build directory) of the generated handler of a route. */
export function routeMetaFileName(route: ServerRoute): string {
  const slug = route.route.replace(/\W+/g, '-').replace(/^-+|-+$/g, '')
  return `svc-auth/openapi/${route.method}-${slug || 'root'}`
}

/** A module route as Nitro holds it: `handler` is a file under the module's routes directory. */
export function moduleRouteOf(entry: { route?: string, method?: string, handler?: unknown, middleware?: boolean }, routesDir: string): ServerRoute | undefined {
  if (entry.middleware || !entry.route || typeof entry.handler !== 'string' || !entry.method) return undefined
  const handler = relative(routesDir, entry.handler).replace(/\\/g, '/').replace(/\.[cm]?[jt]s$/, '')
  if (handler.startsWith('..') || handler.startsWith('/')) return undefined
  const method = entry.method.toLowerCase()
  if (method !== 'get' && method !== 'post' && method !== 'delete') return undefined
  return { route: entry.route, method, handler }
}

/**
 * When Nitro serves an OpenAPI document, each module route is served through a generated handler
 * carrying its description; Nitro's document route is wrapped to drop middleware and internal routes.
 */
export function setupOpenAPI(ctx: SetupContext): void {
  const routesDir = ctx.resolver.resolve('./runtime')
  /** A generated handler module, with a declaration giving it the original handler's type (typed `$fetch`). */
  const generated = (name: string, handlerPath: string, contents: () => string): string => {
    addTemplate({ filename: `${name}.d.ts`, write: true, getContents: () => `export { default } from ${JSON.stringify(handlerPath)}\n` })
    return addTemplate({ filename: `${name}.mjs`, write: true, getContents: contents }).dst
  }
  ctx.nuxt.hook('nitro:init', (nitro) => {
    if (!isOpenAPIServed(nitro.options)) return
    for (const entry of nitro.options.handlers) {
      const route = moduleRouteOf(entry, routesDir)
      const doc = route && contractOf(route)
      if (!route || !doc) continue
      const handlerPath = entry.handler
      const operation = routeOperation(route, doc, ctx.options)
      entry.handler = generated(routeMetaFileName(route), handlerPath, () => routeMetaModule(route, handlerPath, operation))
    }
    const route = nitro.options.openAPI?.route || '/_openapi.json'
    const document = nitro.options.handlers.find(entry => entry.route === route && typeof entry.handler === 'string' && /[/\\]routes[/\\]openapi(?:\.[cm]?js)?$/.test(entry.handler))
    if (document) {
      const handlerPath = document.handler
      document.handler = generated('svc-auth/openapi/document', handlerPath, () => documentModule(handlerPath, ctx.resolver.resolve('./runtime/server/openapi-document')))
    }
  })
}

/** Nitro's document route, wrapped by `withoutInternalPaths` with the app's base URL. */
export function documentModule(nitroHandler: string, wrapper: string): string {
  return [
    '// Generated by nuxt-svc-auth: Nitro\'s OpenAPI document without the entries of server middleware and the module\'s internal routes.',
    'import { useRuntimeConfig } from "nitropack/runtime"',
    `import handler from ${JSON.stringify(nitroHandler)}`,
    `import { withoutInternalPaths } from ${JSON.stringify(wrapper)}`,
    'export default withoutInternalPaths(handler, event => useRuntimeConfig(event).app?.baseURL || \'/\')',
    '',
  ].join('\n')
}
