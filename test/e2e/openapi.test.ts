import { readFileSync } from 'node:fs'
import { Validator } from '@seriousme/openapi-schema-validator'
import { beforeAll, describe, expect, it } from 'vitest'
import type { z } from 'zod'
import { errorCodesOf, jsonSchemaOf } from '../../src/build/openapi'
import { resolveOptions } from '../../src/build/resolve-options'
import { serverRoutes } from '../../src/build/module-routes'
import { DEVTOOLS_ROUTE } from '../../src/runtime/devtools/devtools-paths'
import { ERRORS } from '../../src/runtime/server/lib/edge/errors'
import { contractOf, oauthRoutes, passwordRoutes, type ServerRoute } from '../../src/build/module-routes'
import * as res from '../../src/runtime/server/lib/edge/response-schemas'
import { TEST_LOGIN_PATH, TEST_LOGIN_SECRET_HEADER } from '../../src/runtime/server/lib/core/test-login'
import { findTestLoginFile } from '../../src/testing/secret-file'
import { setupApp } from './app'
import { fixtureDir } from './fixtures'
import { bearer, cookie, json, rememberCodeCookie, setCookieValue, tokenRequest } from './requests'

const server = await setupApp('openapi')

/** The fixture's providers (test/fixtures/openapi/nuxt.config.ts): they decide which routes exist. */
const options = resolveOptions({
  token: { secret: 'x'.repeat(32) },
  providers: { mock: { mockUsers: [{ sub: 'mock-user', email: 'user@example.com', name: 'Una User' }] }, google: { clientId: 'c', clientSecret: 's' }, password: {} },
}, true)
/** Every route the module registers for it, from the functions the module registers them with. */
const routes: ServerRoute[] = [...serverRoutes(options), ...oauthRoutes(options), ...passwordRoutes(options)]

interface Operation {
  tags: string[]
  operationId: string
  requestBody?: { content: Record<string, { schema: unknown }> }
  responses: Record<string, { content?: Record<string, { schema: { properties: { error: { enum: string[] } } } }> }>
}
interface Document {
  openapi: string
  paths: Record<string, Record<string, Operation>>
  components?: { securitySchemes?: Record<string, unknown> }
}

let document: Document
let text: string

beforeAll(async () => {
  const response = await server.fetch('/_openapi.json')
  expect(response.status).toBe(200)
  text = await response.text()
  document = JSON.parse(text) as Document
})

const pathOf = (route: string) => route.replace(/:(\w+)/g, '{$1}')
const operation = (route: string, method: string): Operation => document.paths[pathOf(route)]![method]!

/** The documented JSON answer of a status. */
const documented = (op: Operation, status: number) => op.responses[String(status)]?.content?.['application/json']?.schema

/** Parses a real answer with the zod schema the document was derived from, after checking the document holds that schema. */
async function expectAnswer<S extends z.ZodType>(response: Response, op: Operation, schema: S): Promise<z.output<S>> {
  const body: unknown = await response.json()
  expect(response.status, JSON.stringify(body)).toBe(200)
  expect(documented(op, 200)).toEqual(jsonSchemaOf(schema, 'output'))
  return schema.parse(body)
}

/** A real error answer: the error body, with a code the document lists for its status. */
async function expectDocumentedError(response: Response, op: Operation, status: number, code: keyof typeof ERRORS): Promise<void> {
  expect(response.status).toBe(status)
  const body = res.errorResponse.parse(await response.json())
  expect(body).toMatchObject({ statusCode: status, error: code })
  const schema = documented(op, status) as { properties: { error: { enum: string[] }, statusCode: { const: number } } } | undefined
  expect(schema?.properties.error.enum).toContain(body.error)
  expect(schema?.properties.statusCode.const).toBe(status)
}

describe('/_openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator()
    const result = await validator.validate(JSON.parse(text))
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(validator.version).toBe('3.1')
  })

  it('lists every route of the module with its method, request schema and error answers', () => {
    expect(routes.length).toBeGreaterThan(20)
    for (const route of routes) {
      const op = document.paths[pathOf(route.route)]?.[route.method]
      const label = `${route.method.toUpperCase()} ${route.route}`
      expect(op, label).toBeDefined()
      expect(op!.tags, label).toEqual(['Auth'])
      expect(op!.operationId, label).toMatch(/^svcAuth[A-Z]/)
      const doc = contractOf(route)!
      if (doc.body) {
        const type = (doc.bodyTypes ?? ['json'])[0] === 'form' ? 'application/x-www-form-urlencoded' : 'application/json'
        expect(op!.requestBody?.content[type]?.schema, label).toEqual(jsonSchemaOf(doc.body, 'input'))
      }
      else {
        expect(op!.requestBody, label).toBeUndefined()
      }
      for (const code of errorCodesOf(route, doc)) {
        expect(documented(op!, ERRORS[code].status)?.properties.error.enum, `${label} ${code}`).toContain(code)
      }
    }
    const ids = Object.values(document.paths).flatMap(item => Object.values(item).map(op => op.operationId)).filter(Boolean)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('keeps the host\'s own routes beside the module\'s, and no entry that is not a path', () => {
    expect(document.paths['/api/host/hello']?.get).toMatchObject({ operationId: 'hostHello', tags: ['Host'], summary: 'Greeting of the host app' })
    expect(Object.keys(document.paths).filter(path => !path.startsWith('/'))).toEqual([])
  })

  it('lists none of the module\'s internal routes, though this test build has the test-only login', async () => {
    const { found } = findTestLoginFile({ rootDir: fixtureDir('openapi') })
    const { secret } = JSON.parse(readFileSync(found!, 'utf8')) as { secret: string }
    // With the build's secret and no user, the route answers 400: it exists (without it, 404).
    const login = await server.fetch(TEST_LOGIN_PATH, { method: 'POST', headers: { 'content-type': 'application/json', [TEST_LOGIN_SECRET_HEADER]: secret }, body: '{}' })
    expect(login.status).toBe(400)
    expect(Object.keys(document.paths).filter(path => path === TEST_LOGIN_PATH || path.startsWith(DEVTOOLS_ROUTE))).toEqual([])
    expect(text).not.toContain(TEST_LOGIN_PATH)
  })

  it('declares the bearer scheme and holds no secret of the configuration', () => {
    expect(document.components?.securitySchemes).toMatchObject({ svcAuthBearer: { type: 'http', scheme: 'bearer' } })
    for (const secret of ['openapi-fixture-secret', 'openapi-google-client-secret-value', 'PRIVATE KEY']) expect(text).not.toContain(secret)
  })

  it('serves the UIs', async () => {
    expect((await server.fetch('/_scalar')).status).toBe(200)
    expect((await server.fetch('/_swagger')).status).toBe(200)
  })
})

describe('real answers match the documented schemas', () => {
  it('token exchange, /me, sessions, key set, refresh and logout', async () => {
    const issued = await server.fetch('/api/test/code', json({ user: { sub: 'doc-user', email: 'doc@example.com', name: 'Doc User' } }))
    const code = rememberCodeCookie(issued, ((await issued.json()) as { code: string }).code)
    const exchanged = await server.fetch('/auth/token', tokenRequest(code))
    const refreshCookie = setCookieValue(exchanged, 'svc-refresh')
    const session = await expectAnswer(exchanged, operation('/auth/token', 'post'), res.tokenResponse)
    expect(refreshCookie).toBeTruthy()

    const me = await expectAnswer(await server.fetch('/api/user/me', bearer(session.accessToken)), operation('/api/user/me', 'get'), res.claimsResponse)
    expect(me).toMatchObject({ sub: 'doc-user', email: 'doc@example.com' })

    const list = await expectAnswer(await server.fetch('/auth/sessions', bearer(session.accessToken)), operation('/auth/sessions', 'get'), res.sessionsResponse)
    expect(list.sessions).toEqual([expect.objectContaining({ current: true })])

    const keys = await expectAnswer(await server.fetch('/.well-known/jwks.json'), operation('/.well-known/jwks.json', 'get'), res.jwksResponse)
    expect(keys.keys).toHaveLength(1)

    const refreshed = await server.fetch('/auth/refresh', cookie(refreshCookie!))
    const next = setCookieValue(refreshed, 'svc-refresh')
    await expectAnswer(refreshed, operation('/auth/refresh', 'post'), res.refreshResponse)

    await expectAnswer(await server.fetch('/auth/logout', cookie(next!)), operation('/auth/logout', 'post'), res.logoutResponse)
  })

  it('error answers carry a code the document lists for their status', async () => {
    await expectDocumentedError(await server.fetch('/auth/token', json({ code: '' })), operation('/auth/token', 'post'), 400, 'bad_request')
    await expectDocumentedError(await server.fetch('/auth/token', json({ code: 'unknown' })), operation('/auth/token', 'post'), 401, 'invalid_code')
    await expectDocumentedError(await server.fetch('/api/user/me'), operation('/api/user/me', 'get'), 401, 'unauthorized')
    await expectDocumentedError(await server.fetch('/auth/refresh', { method: 'POST' }), operation('/auth/refresh', 'post'), 401, 'invalid_refresh_token')
    await expectDocumentedError(await server.fetch('/auth/password/login', json({ email: 42 })), operation('/auth/password/login', 'post'), 400, 'bad_request')
  })
})
