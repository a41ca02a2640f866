import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createApp, createError, defineEventHandler, getRouterParam, toNodeListener, type H3Event } from 'h3'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { resolveOptions } from '../../src/build/resolve-options'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { issueRefreshToken } from '../../src/runtime/server/lib/core/records/refresh-token'
import { useAuthContext } from '../../src/runtime/server/utils/auth-context'
import middleware from '../../src/runtime/server/middleware/route-protection'
import { requirePermission } from '../../src/runtime/organizations/server/utils/require-permission'
import { CookieJar } from '../helpers/cookie-jar'
import { moduleRouter } from './helpers/module-router'
import { memoryOrganizations, orgId } from './helpers/memory-organizations'

// The enforcement examples of docs/organizations.md, as a host would copy them, against a user of another
// tenant: anyone may create an organization (and is its owner, `*`), so "the role in the active organization"
// says nothing about a resource of another organization unless the check names that organization.
const nitro = vi.hoisted(() => ({ options: undefined as unknown, rules: {} as Record<string, unknown> }))
vi.mock('nitropack/runtime', () => ({
  useRuntimeConfig: () => ({ svcAuth: nitro.options }),
  useNitroApp: () => ({ hooks: { callHook: async () => {} } }),
  getRouteRules: (event: H3Event) => ({ auth: nitro.rules[event.path.split('?')[0]!.replace(/\/[^/]+$/, '/**')] }),
}))

const options = resolveOptions({
  token: { secret: 'org-audit-tenant-secret-0123456789-abcdefg' },
  tokenRefresh: { storage: { driver: 'memory' } },
  logging: { level: 'silent' },
  organizations: {},
}, false)
nitro.options = options
// docs/organizations.md, "Route rules".
nitro.rules = { '/api/projects/**': { permission: 'org:update' } }

const ACME = orgId('acme')
/** Acme's data in the host's database: a document of Acme. */
const docs = new Map([['doc-1', { id: 'doc-1', orgId: ACME, teamId: undefined as string | undefined, text: 'Acme secrets' }]])
let server: Server
let base = ''

beforeAll(async () => {
  const orgs = memoryOrganizations()
  await orgs.join(ACME, 'alice', 'owner')
  defineAuthHandlers({ organizations: { adapter: orgs.adapter, sendInvitation: () => {} } })
  const router = await moduleRouter(options)
  // docs/organizations.md, "Server utils", as written there.
  router.get('/api/docs/:id', defineEventHandler(async (event) => {
    const doc = docs.get(getRouterParam(event, 'id')!)!
    await requirePermission(event, 'org:update', { resource: { id: doc.id, teamId: doc.teamId }, organization: doc.orgId })
    return doc
  }))
  // docs/organizations.md, "Route rules": the rule vouches for the role in the active organization only, so the
  // handler reads that organization's data alone.
  router.get('/api/projects/:id', defineEventHandler((event) => {
    if (event.context.user?.org !== ACME) throw createError({ statusCode: 404 })
    return { project: getRouterParam(event, 'id'), of: ACME }
  }))
  const app = createApp()
  app.use(middleware)
  app.use(router)
  server = createServer(toNodeListener(app))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  resetAuthHandlers()
  server.closeAllConnections()
  await new Promise(resolve => server.close(resolve))
  await (await useAuthContext()).dispose()
})

/** A logged-in browser of `userId` (a stored session and its refresh cookie) with an access token. */
async function browserOf(userId: string) {
  const jar = new CookieJar()
  const ctx = await useAuthContext()
  const { token: cookie } = await issueRefreshToken(ctx, { user: { sub: userId, email: `${userId}@example.com` }, userId, claims: {} })
  jar.set(options.tokenRefresh.cookie.cookieName, cookie)
  let token = ''
  const send = async (method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { cookie: jar.header(), accept: 'application/json' }
    if (token) headers.authorization = `Bearer ${token}`
    if (body !== undefined) headers['content-type'] = 'application/json'
    const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
    jar.store(res)
    return { status: res.status, body: await res.json() as Record<string, unknown> }
  }
  token = (await send('POST', options.endpoints.refreshPath, {})).body.accessToken as string
  return {
    send,
    set token(value: string) {
      token = value
    },
  }
}

describe('the documented permission checks against another tenant', () => {
  it('a user of no organization of Acme reads Acme\'s document and passes Acme\'s route rule after creating an organization of her own', async () => {
    const mallory = await browserOf('mallory')
    expect((await mallory.send('GET', '/api/docs/doc-1')).status).toBe(403)
    // Mallory creates her own organization (anyone may) and makes it active: she is its owner.
    const created = await mallory.send('POST', `${options.endpoints.authPath}/orgs`, { name: 'Mallory Inc' })
    expect(created.status).toBe(201)
    const switched = await mallory.send('POST', `${options.endpoints.authPath}/orgs/active`, { orgId: (created.body.organization as { id: string }).id })
    mallory.token = switched.body.accessToken as string
    const doc = await mallory.send('GET', '/api/docs/doc-1')
    const project = await mallory.send('GET', '/api/projects/acme-roadmap')
    // Acme's document and project are not Mallory's to touch.
    expect({ doc: doc.status, project: project.status }).toEqual({ doc: 403, project: 404 })
  })
})
