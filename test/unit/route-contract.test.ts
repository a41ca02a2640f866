import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createApp, createRouter, defineEventHandler, toNodeListener } from 'h3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { AuthContext } from '../../src/runtime/server/lib/core/context'
import { authError, sendAuthError } from '../../src/runtime/server/lib/edge/errors'
import { guarded, guardErrors, type RouteContract } from '../../src/runtime/server/lib/edge/route-contract'
import { unitContext } from './helpers/context'

const contract = {
  id: 'Example',
  method: 'post',
  handler: 'example.post',
  path: () => '/example',
  summary: 'An example',
  description: 'A route whose handler calls no guard.',
  sameOrigin: true,
  rateLimit: 'login',
  body: z.object({ name: z.string().min(1) }),
  errors: [],
} as const satisfies RouteContract

/** The same route without a rate limit, and a GET of it that reads the query. */
const open = { ...contract, rateLimit: undefined } as const satisfies RouteContract
const link = { ...open, id: 'ExampleLink', method: 'get', sameOrigin: undefined, body: undefined, query: z.object({ name: z.string() }) } as const satisfies RouteContract

let server: Server
let base: string
/** What the handlers saw, in order. */
const calls: string[] = []

beforeAll(async () => {
  const ctx = await unitContext({ rateLimit: { enabled: true, login: { perIp: 3, perEmailAndIp: 5, perEmail: 100, window: 900, deviceCookieMaxAge: 60 } } })
  const serve = (run: (ctx: AuthContext, event: Parameters<typeof sendAuthError>[0]) => Promise<unknown>) => defineEventHandler(async (event) => {
    try {
      return await run(ctx, event)
    }
    catch (error) {
      return sendAuthError(event, error)
    }
  })
  const handle = async (_ctx: AuthContext, _event: unknown, input: { name: string }) => {
    calls.push(input.name)
    return { hello: input.name }
  }
  const router = createRouter()
  router.post('/example', serve(guarded(contract, handle)))
  const both = serve(guarded([link, open], handle))
  router.get('/both', both)
  router.post('/both', both)
  router.post('/authorized', serve(guarded(open, handle, async (_c, event) => {
    if (event.node.req.headers.authorization !== 'Bearer ok') throw authError('unauthorized')
  })))
  const app = createApp()
  app.use(router)
  server = createServer(toNodeListener(app))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(() => new Promise(resolve => server?.close(resolve)))

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })

describe('a route behind its contract', () => {
  it('refuses a cross-origin request, then a bad body, with JSON errors, before its handler runs', async () => {
    const foreign = await post('/example', '{"name":"x"}', { origin: 'https://evil.example' })
    expect(foreign.status).toBe(403)
    expect(await foreign.json()).toMatchObject({ statusCode: 403, error: 'cross_origin_request' })
    const bad = await post('/example', '{"name":""}')
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ statusCode: 400, error: 'bad_request', message: expect.stringContaining('name') })
    const malformed = await post('/example', '{')
    expect(await malformed.json()).toMatchObject({ statusCode: 400, error: 'bad_request', message: 'Request body must be valid JSON' })
    expect(calls).toEqual([])
  })

  it('counts the rate limit of its rule per client address', async () => {
    // The requests above spent 2 of 3 (the cross-origin one was refused before the count).
    expect((await post('/example', '{"name":"a"}')).status).toBe(200)
    const limited = await post('/example', '{"name":"b"}')
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(await limited.json()).toMatchObject({ error: 'rate_limited' })
    expect(calls).toEqual(['a'])
  })

  it('picks the contract of the request\'s method: the query for GET, the body for POST', async () => {
    expect(await (await fetch(`${base}/both?name=q`)).json()).toEqual({ hello: 'q' })
    expect((await fetch(`${base}/both`)).status).toBe(400)
    expect((await post('/both', '{"name":"p"}', { origin: 'https://evil.example' })).status).toBe(403)
  })

  it('authorizes before it reads the body', async () => {
    expect(await (await post('/authorized', '{')).json()).toMatchObject({ error: 'unauthorized' })
    expect((await post('/authorized', '{', { authorization: 'Bearer ok' })).status).toBe(400)
    expect(await (await post('/authorized', '{"name":"z"}', { authorization: 'Bearer ok' })).json()).toEqual({ hello: 'z' })
  })

  it('documents the error codes of its guards', () => {
    expect(guardErrors(contract)).toEqual(['cross_origin_request', 'rate_limited', 'bad_request'])
    expect(guardErrors({ ...contract, ownInput: true, sameOrigin: undefined, rateLimit: undefined })).toEqual([])
  })
})
