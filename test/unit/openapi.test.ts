import { existsSync, readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { Parser, type Node } from 'acorn'
import type { H3Event } from 'h3'
import { describe, expect, it } from 'vitest'
import { assertLiteralJson, documentModule, errorCodesOf, isOpenAPIServed, jsonSchemaOf, moduleRouteOf, routeMetaFileName, routeMetaModule, routeOperation, type Json } from '../../src/build/openapi'
import { resolveOptions } from '../../src/build/resolve-options'
import { serverRoutes } from '../../src/build/module-routes'
import { ERRORS, type AuthErrorCode } from '../../src/runtime/server/lib/edge/errors'
import { auditAdminRoutes, auditRoutes, contractOf, identityRoutes, magicLinkRoutes, nativeRoutes, oauthRoutes, organizationRoutes, passkeyRoutes, passwordRoutes, ROUTE_CONTRACTS, twoFactorRoutes, type ServerRoute } from '../../src/build/module-routes'
import { DEVTOOLS_API, DEVTOOLS_ROUTE } from '../../src/runtime/devtools/devtools-paths'
import { isDocumentedPath, withoutInternalPaths } from '../../src/runtime/server/openapi-document'
import { sessionIdSchema, tokenRequest, verifyRequest } from '../../src/runtime/server/lib/edge/request-schemas'
import { errorResponse, sessionsResponse, tokenResponse } from '../../src/runtime/server/lib/edge/response-schemas'
import { TEST_LOGIN_PATH } from '../../src/runtime/server/lib/core/test-login'
import type { RouteContract } from '../../src/runtime/server/lib/edge/route-contract'
import { CORE_ROUTES } from '../../src/runtime/server/core-routes'
import { IMPERSONATION_ROUTES } from '../../src/runtime/impersonation/server/impersonation-routes'
import { OAUTH_ROUTES } from '../../src/runtime/oauth/server/oauth-routes'
import { PASSWORD_ROUTES } from '../../src/runtime/password/server/password-routes'
import { TWO_FACTOR_ROUTES } from '../../src/runtime/two-factor/server/two-factor-routes'
import { PASSKEY_ROUTES } from '../../src/runtime/passkey/server/passkey-routes'
import { MAGIC_LINK_ROUTES } from '../../src/runtime/magic-link/server/magic-link-routes'
import { ORGANIZATION_ROUTES } from '../../src/runtime/organizations/server/organizations-routes'
import { AUDIT_ROUTES } from '../../src/runtime/audit/server/audit-routes'
import { AUDIT_ADMIN_ROUTES } from '../../src/runtime/audit/server/admin-routes'
import { NATIVE_ROUTES } from '../../src/runtime/native/server/native-routes'
import { IDENTITY_ROUTES } from '../../src/runtime/identities/server/identities-routes'
import { SECURITY_EVENTS } from '../../src/runtime/shared/event-catalog'

/** The contract groups, by the name their handlers' code uses. */
const GROUPS: Record<string, Record<string, RouteContract | readonly RouteContract[]>> = { CORE_ROUTES, IMPERSONATION_ROUTES, OAUTH_ROUTES, PASSWORD_ROUTES, TWO_FACTOR_ROUTES, PASSKEY_ROUTES, MAGIC_LINK_ROUTES, ORGANIZATION_ROUTES, AUDIT_ROUTES, AUDIT_ADMIN_ROUTES, NATIVE_ROUTES, IDENTITY_ROUTES }

const SECRETS = {
  token: 'unit-token-secret-0123456789-abcdefghijklmnop',
  google: 'unit-google-client-secret-value',
  encryption: 'unit-encryption-key-0123456789-abcdefghij',
}

const options = resolveOptions({
  token: { secret: SECRETS.token },
  tokenRefresh: { encryption: { enabled: true, key: SECRETS.encryption } },
  providers: {
    mock: { mockUsers: [{ sub: 'm', email: 'm@example.com', name: 'M' }] },
    google: { clientId: 'google-client', clientSecret: SECRETS.google },
    password: {},
    passkey: {},
    magicLink: {},
  },
  twoFactor: { enabled: true },
  organizations: {},
  audit: { adminPage: '/admin/security' },
  native: { redirectUris: ['com.example.app:/callback'] },
  identities: {},
}, true)

/** Every route the module registers with these options. */
const routes: ServerRoute[] = [...serverRoutes(options), ...oauthRoutes(options), ...passwordRoutes(options), ...passkeyRoutes(options), ...magicLinkRoutes(options), ...twoFactorRoutes(options), ...organizationRoutes(options), ...auditRoutes(options), ...auditAdminRoutes(options), ...nativeRoutes(options), ...identityRoutes(options)]

type JsonObject = { [key: string]: Json }
const operationOf = (route: ServerRoute) => routeOperation(route, contractOf(route)!, options) as JsonObject & {
  responses: Record<string, { content?: Record<string, { schema: JsonObject & { properties: Record<string, JsonObject> } }> }>
  parameters: JsonObject[]
  requestBody?: { content: Record<string, { schema: JsonObject }> }
}
const find = (handler: string, method = 'post') => routes.find(r => r.handler === handler && r.method === method)!

/** What Nitro's `nitro:handlers-meta` plugin reads from a handler file (a copy of its `astToObject`). */
function nitroReadsMeta(code: string): unknown {
  type AstNode = Node & { expression?: AstNode, callee?: AstNode & { name?: string }, arguments?: AstNode[], properties?: Array<AstNode & { key: { name?: string, value?: string }, value: AstNode }>, elements?: AstNode[], value?: unknown }
  const astToObject = (node: AstNode): unknown => {
    if (node.type === 'ObjectExpression') return Object.fromEntries(node.properties!.filter(p => p.type === 'Property').map(p => [p.key.name ?? p.key.value, astToObject(p.value)]))
    if (node.type === 'ArrayExpression') return node.elements!.map(astToObject).filter(item => item !== undefined)
    if (node.type === 'Literal') return node.value
    return undefined
  }
  const ast = Parser.parse(code, { ecmaVersion: 'latest', sourceType: 'module' }) as Node & { body: AstNode[] }
  const call = ast.body.find(n => n.type === 'ExpressionStatement' && n.expression?.type === 'CallExpression' && n.expression.callee?.name === 'defineRouteMeta')
  return call ? JSON.parse(JSON.stringify(astToObject(call.expression!.arguments![0]!))) : null
}

describe('route descriptions', () => {
  it('describe every route the module registers, and nothing else', () => {
    expect(routes.length).toBeGreaterThan(20)
    for (const route of routes) expect(contractOf(route), `${route.method} ${route.handler}`).toBeDefined()
    const used = new Set(routes.map(r => `${r.method} ${r.handler}`))
    expect([...ROUTE_CONTRACTS.keys()].filter(key => !used.has(key))).toEqual([])
  })

  it('declare the error codes their handlers throw, and only codes the handler\'s code can throw', () => {
    const runtime = resolve(import.meta.dirname, '../../src/runtime')
    /** Codes a file throws itself: `authError('code'`, and `rate_limited` for `tooMany(`. */
    const throws = (file: string): { codes: Set<string>, imports: string[] } => {
      const code = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')
      const codes = new Set([...code.matchAll(/authError\(\s*'(\w+)'/g)].map(m => m[1]!))
      if (/\btooMany\(/.test(code)) codes.add('rate_limited')
      const imports = [...code.matchAll(/^import (?!type )[^']*'(\.[^']+)'/gm)].map(m => resolve(dirname(file), `${m[1]}.ts`))
      return { codes, imports }
    }
    /** Codes thrown by a file and every file it imports (values, not types), transitively. */
    const reachable = (file: string, seen = new Set<string>()): Set<string> => {
      if (seen.has(file) || !existsSync(file)) return new Set()
      seen.add(file)
      const { codes, imports } = throws(file)
      for (const next of imports) for (const code of reachable(next, seen)) codes.add(code)
      return codes
    }
    const guardedIn = new Map<string, RouteContract[]>()
    for (const contract of ROUTE_CONTRACTS.values()) {
      // The file that puts the contract's handler behind its guards: the route file, or the feature's code it names.
      const route = resolve(runtime, `${contract.handler}.ts`)
      const file = [route, ...throws(route).imports].find(f => existsSync(f) && readFileSync(f, 'utf8').includes(`guarded(${Object.entries(GROUPS).find(([, g]) => Object.values(g).flat().includes(contract))![0]}.`))!
      expect(file, contract.handler).toBeDefined()
      guardedIn.set(file, [...(guardedIn.get(file) ?? []), contract])
      const can = reachable(file)
      expect(contract.errors.filter(code => !can.has(code)), `${contract.method} ${contract.handler}: declared, never thrown`).toEqual([])
    }
    for (const [file, contracts] of guardedIn) {
      const declared = new Set(contracts.flatMap(c => errorCodesOf({ route: '', method: c.method, handler: c.handler }, c)))
      expect([...throws(file).codes].filter(code => !declared.has(code as AuthErrorCode)), `${file}: thrown, not declared`).toEqual([])
    }
  })

  it('give unique operation ids, one per provider for the login route', () => {
    const ids = routes.map(r => operationOf(r).operationId)
    expect(new Set(ids).size).toBe(ids.length)
    expect(operationOf(find('oauth/server/routes/login.get', 'get')).operationId).toMatch(/^svcAuthLogin(Mock|Google)$/)
    expect(routes.filter(r => r.handler === 'oauth/server/routes/login.get').map(r => operationOf(r).summary).sort()).toEqual(['Log in with google', 'Log in with mock'])
  })

  it('take request and answer schemas from the zod schemas the routes use', () => {
    const token = operationOf(find('server/routes/token.post'))
    expect(token.requestBody!.content['application/json']!.schema).toEqual(jsonSchemaOf(tokenRequest, 'input'))
    expect(token.responses['200']!.content!['application/json']!.schema).toEqual(jsonSchemaOf(tokenResponse, 'output'))
    expect(operationOf(find('server/routes/sessions/list.get', 'get')).responses['200']!.content!['application/json']!.schema).toEqual(jsonSchemaOf(sessionsResponse, 'output'))
    // GET verify reads the query, POST verify a JSON or form body: the same schema.
    const link = operationOf(find('password/server/routes/login-verify', 'get'))
    expect(link.requestBody).toBeUndefined()
    expect(link.parameters.map(p => [p.name, p.in, p.required])).toEqual([['code', 'query', true], ['email', 'query', false], ['flow', 'query', false]])
    const form = operationOf(find('password/server/routes/login-verify', 'post'))
    expect(Object.keys(form.requestBody!.content)).toEqual(['application/json', 'application/x-www-form-urlencoded'])
    expect(form.requestBody!.content['application/x-www-form-urlencoded']!.schema).toEqual(jsonSchemaOf(verifyRequest, 'input'))
  })

  it('answer each error status with the codes of that status, narrowed from the error body', () => {
    const token = operationOf(find('server/routes/token.post'))
    const at = (status: number) => token.responses[String(status)]!.content!['application/json']!.schema
    expect(Object.keys(token.responses).sort()).toEqual(['200', '400', '401', '403', '413', '500'])
    expect(at(401).properties.error).toEqual({ type: 'string', enum: ['invalid_code', 'code_binding_mismatch'] })
    expect(at(401).properties.statusCode).toEqual({ type: 'integer', const: 401 })
    expect(at(500).properties.error!.enum).toEqual(['internal_error'])
    expect(Object.keys(at(400).properties).sort()).toEqual(Object.keys(errorResponse.shape).sort())
    expect(token.responses['401']!).toMatchObject({ description: expect.stringContaining(ERRORS.code_binding_mismatch.message) })
    // A GET has no body, so no 413.
    expect(operationOf(find('server/routes/me.get', 'get')).responses['413']).toBeUndefined()
  })

  it('describe the audit log\'s query parameters, its JSON lines export and its event', () => {
    const search = operationOf(find('audit/server/routes/log.get', 'get'))
    expect(search.parameters.map(p => [p.name, p.in, p.required])).toEqual([['user', 'query', false], ['type', 'query', false], ['since', 'query', false], ['until', 'query', false], ['cursor', 'query', false], ['limit', 'query', false]])
    const type = search.parameters.find(p => p.name === 'type')!.schema as { enum: string[] }
    expect(type.enum).toEqual(expect.arrayContaining([...Object.keys(SECURITY_EVENTS), 'org.*', 'two_factor.*']))
    const event = search.responses['200']!.content!['application/json']!.schema.properties.events as unknown as { items: { properties: Record<string, unknown> } }
    expect(Object.keys(event.items.properties)).toEqual(['id', 'at', 'type', 'outcome', 'actor', 'subject', 'impersonator', 'organization', 'session', 'client', 'details'])
    const exported = operationOf(find('audit/server/routes/export.get', 'get'))
    expect(Object.keys(exported.responses['200']!.content!)).toEqual(['application/x-ndjson'])
    expect(exported.responses['200']!.content!['application/x-ndjson']!.schema.properties).toHaveProperty('mac')
    expect(Object.keys(search.responses).sort()).toEqual(['200', '400', '401', '403', '500'])
    expect(operationOf(find('audit/server/routes/activity.get', 'get')).operationId).toBe('svcAuthMyActivity')
  })

  it('declare the bearer scheme, the refresh cookie and path parameters', () => {
    const me = operationOf(find('server/routes/me.get', 'get'))
    expect(me.security).toEqual([{ svcAuthBearer: [] }])
    expect(me.$global).toEqual({ components: { securitySchemes: { svcAuthBearer: expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }) } } })
    const refresh = operationOf(find('server/routes/refresh.post'))
    expect(refresh.security).toBeUndefined()
    expect(refresh.parameters).toEqual([expect.objectContaining({ name: 'svc-refresh', in: 'cookie', required: false })])
    expect(operationOf(find('impersonation/server/routes/unimpersonate.post')).parameters).toEqual([expect.objectContaining({ name: 'svc-refresh', in: 'cookie', required: true })])
    const revoke = operationOf(find('server/routes/sessions/revoke.delete', 'delete'))
    expect(revoke.parameters).toEqual([{ name: 'id', in: 'path', required: true, schema: jsonSchemaOf(sessionIdSchema, 'input') }])
    expect(operationOf(find('server/routes/jwks.get', 'get')).security).toBeUndefined()
  })

  it('hold nothing of the options but paths and the cookie name', () => {
    const text = JSON.stringify(routes.map(operationOf))
    for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret)
    expect(text).not.toContain('google-client"')
  })
})

describe('generated handler files', () => {
  it('carry a literal Nitro reads back unchanged, and re-export the handler', () => {
    for (const route of routes) {
      const operation = operationOf(route)
      const code = routeMetaModule(route, `/module/runtime/${route.handler}`, operation)
      expect(code).toContain(`export { default } from "/module/runtime/${route.handler}"`)
      expect(nitroReadsMeta(code)).toEqual({ openAPI: operation })
    }
  })

  it('refuse values Nitro would lose (negative or non-finite numbers)', () => {
    expect(() => assertLiteralJson({ a: [{ minimum: -1 }] })).toThrow(/meta\.a\[0\]\.minimum is -1/)
    expect(() => assertLiteralJson({ a: Number.POSITIVE_INFINITY })).toThrow()
    expect(() => assertLiteralJson({ a: 0, b: [1, 'x', null, true] })).not.toThrow()
    // The literal reader drops a unary minus: this is what the check protects against.
    expect(nitroReadsMeta('defineRouteMeta({"a":-1,"b":[-2,3]})')).toEqual({ b: [3] })
  })

  it('get distinct file names per method and route', () => {
    const names = routes.map(routeMetaFileName)
    expect(new Set(names).size).toBe(names.length)
    expect(routeMetaFileName({ route: '/.well-known/jwks.json', method: 'get', handler: 'jwks.get' })).toBe('svc-auth/openapi/get-well-known-jwks-json')
    expect(routeMetaFileName({ route: '/auth/sessions/:id', method: 'delete', handler: 'sessions/revoke.delete' })).toBe('svc-auth/openapi/delete-auth-sessions-id')
  })

  it('wrap Nitro\'s document route', () => {
    const code = documentModule('/nitro/runtime/internal/routes/openapi', '/module/lib/openapi-document')
    expect(code).toContain('import handler from "/nitro/runtime/internal/routes/openapi"')
    expect(code).toContain('export default withoutInternalPaths(handler, event => useRuntimeConfig(event).app?.baseURL || \'/\')')
    expect(code).toContain('import { withoutInternalPaths } from "/module/lib/openapi-document"')
    expect(code).toContain('import { useRuntimeConfig } from "nitropack/runtime"')
  })
})

describe('wiring helpers', () => {
  it('isOpenAPIServed follows Nitro: experimental.openAPI, and in production openAPI.production', () => {
    expect(isOpenAPIServed({ dev: true, experimental: { openAPI: true } })).toBe(true)
    expect(isOpenAPIServed({ dev: false, experimental: { openAPI: true } })).toBe(false)
    expect(isOpenAPIServed({ dev: false, experimental: { openAPI: true }, openAPI: { production: 'runtime' } })).toBe(true)
    expect(isOpenAPIServed({ dev: false, experimental: { openAPI: true }, openAPI: { production: 'prerender' } })).toBe(true)
    expect(isOpenAPIServed({ dev: true, experimental: {}, openAPI: { production: 'runtime' } })).toBe(false)
    expect(isOpenAPIServed({ dev: true })).toBe(false)
  })

  it('moduleRouteOf finds the module\'s own handlers only', () => {
    const dir = '/m/dist/runtime'
    expect(moduleRouteOf({ route: '/auth/token', method: 'post', handler: `${dir}/server/routes/token.post` }, dir)).toEqual({ route: '/auth/token', method: 'post', handler: 'server/routes/token.post' })
    expect(moduleRouteOf({ route: '/auth/sessions/:id', method: 'DELETE', handler: `${dir}/server/routes/sessions/revoke.delete.js` }, dir)).toEqual({ route: '/auth/sessions/:id', method: 'delete', handler: 'server/routes/sessions/revoke.delete' })
    expect(moduleRouteOf({ route: '/api/x', method: 'get', handler: '/app/server/api/x.get.ts' }, dir)).toBeUndefined()
    expect(moduleRouteOf({ middleware: true, handler: `${dir}/token.post` }, dir)).toBeUndefined()
    expect(moduleRouteOf({ route: '/auth/token', method: 'post', handler: () => null }, dir)).toBeUndefined()
  })

  it('withoutInternalPaths drops the entries that are no path', async () => {
    const nitro = (() => ({ openapi: '3.1.0', paths: { '': { get: {} }, '/auth/token': { post: {} } } })) as unknown as Parameters<typeof withoutInternalPaths>[0]
    const wrapped = withoutInternalPaths(nitro)
    expect(await wrapped({ __is_event__: true } as unknown as H3Event)).toEqual({ openapi: '3.1.0', paths: { '/auth/token': { post: {} } } })
  })

  it('withoutInternalPaths drops the DevTools routes and the test-only login, under any base URL', async () => {
    const internal = [DEVTOOLS_ROUTE, `${DEVTOOLS_ROUTE}${DEVTOOLS_API.events}`, `${DEVTOOLS_ROUTE}${DEVTOOLS_API.options}`, TEST_LOGIN_PATH]
    // Routes of the host that only share a beginning with them stay.
    const kept = ['/auth/token', '/api/host/hello', `${DEVTOOLS_ROUTE}-host`, `${TEST_LOGIN_PATH}-host`, `${TEST_LOGIN_PATH}/more`, '/__svc_auth__']
    for (const base of ['/', '/app/', '/app']) {
      // Nitro lists routes relative to the base URL (which it puts in `servers`); a path with the base is recognized too.
      const listed = base === '/' ? internal : [...internal, ...internal.map(path => `/app${path}`)]
      const paths = Object.fromEntries([...listed, ...kept].map(path => [path, { get: { responses: {} } }]))
      const nitro = (() => ({ openapi: '3.1.0', servers: [{ url: `http://localhost:3000${base}` }], paths })) as unknown as Parameters<typeof withoutInternalPaths>[0]
      const document = await withoutInternalPaths(nitro, () => base)({ __is_event__: true } as unknown as H3Event) as { paths: Record<string, unknown>, servers: unknown[] }
      expect(Object.keys(document.paths).sort(), base).toEqual([...kept].sort())
      expect(document.servers).toEqual([{ url: `http://localhost:3000${base}` }])
      for (const path of listed) expect(isDocumentedPath(path, base), `${base} ${path}`).toBe(false)
    }
    // Under another base, a path that carries some other prefix is the host's.
    expect(isDocumentedPath(`/other${DEVTOOLS_ROUTE}`, '/app/')).toBe(true)
    expect(isDocumentedPath('', '/')).toBe(false)
    expect(isDocumentedPath('/auth/token', '/')).toBe(true)
  })
})
