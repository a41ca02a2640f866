import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createApp, defineEventHandler, setResponseStatus, toNodeListener } from 'h3'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { TEST_LOGIN_PATH, TEST_LOGIN_SECRET_HEADER } from '../../src/runtime/server/lib/core/test-login'
import { peekAuthContext } from '../../src/runtime/server/utils/auth-context'

// The test-only login's server middleware in front of an app whose last handler answers every
// path it does not know, as a Nuxt app's pages do; Nitro's runtime is these two functions.
const SECRET = vi.hoisted(() => 'b'.repeat(43))
vi.mock('#svc-auth/test-login', async () => {
  const { hashTestLoginSecret } = await import('../../src/runtime/server/lib/core/test-login')
  return { secretHash: hashTestLoginSecret(SECRET) }
})
vi.mock('nitropack/runtime', async () => {
  const { resolveOptions } = await import('../../src/build/resolve-options')
  const svcAuth = resolveOptions({ token: { secret: 'test-login-unit-secret-0123456789-abcdefg' }, tokenRefresh: { storage: { driver: 'memory' } }, logging: { level: 'silent' } }, false)
  return { useRuntimeConfig: () => ({ svcAuth }), useNitroApp: () => ({ hooks: { callHook: async () => {} } }) }
})

let server: Server
let base = ''

beforeAll(async () => {
  const middleware = (await import('../../src/runtime/server/middleware/test-login-endpoint')).default
  const app = createApp()
  app.use('/app', middleware)
  app.use('/app', defineEventHandler((event) => {
    setResponseStatus(event, 404, 'Page not found')
    return `the app's own answer to ${event.method} ${event.path}`
  }))
  server = createServer(toNodeListener(app))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/app`
})

afterAll(async () => {
  await new Promise(resolve => server?.close(resolve))
  await peekAuthContext()?.dispose()
})

const post = (path: string, headers: Record<string, string>) => fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ user: { sub: 'u1' } }) })

describe('the test-only login middleware', () => {
  it('passes a request without the build\'s secret on to the app, untouched: the app answers it as any unknown path', async () => {
    const secrets: Array<Record<string, string>> = [{}, { [TEST_LOGIN_SECRET_HEADER]: 'guessed' }, { [TEST_LOGIN_SECRET_HEADER]: `${SECRET}x` }]
    for (const headers of secrets) {
      const res = await post(TEST_LOGIN_PATH, headers)
      expect(res.status).toBe(404)
      expect(await res.text()).toBe(`the app's own answer to POST ${TEST_LOGIN_PATH}`)
      expect(res.headers.get('cache-control')).toBeNull()
      expect(res.headers.getSetCookie()).toEqual([])
    }
  })

  it('answers a POST with the secret under the app\'s base URL, and nothing else (other methods, other paths)', async () => {
    const res = await post(`${TEST_LOGIN_PATH}?from=test`, { [TEST_LOGIN_SECRET_HEADER]: SECRET })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ code: expect.any(String) })
    expect(res.headers.get('cache-control')).toBe('no-store')
    const get = await fetch(`${base}${TEST_LOGIN_PATH}`, { headers: { [TEST_LOGIN_SECRET_HEADER]: SECRET } })
    expect(await get.text()).toBe(`the app's own answer to GET ${TEST_LOGIN_PATH}`)
    expect(await (await post(`${TEST_LOGIN_PATH}/x`, { [TEST_LOGIN_SECRET_HEADER]: SECRET })).text()).toBe(`the app's own answer to POST ${TEST_LOGIN_PATH}/x`)
  })
})
