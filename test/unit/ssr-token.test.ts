import type { H3Event } from 'h3'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import type { AuthContext } from '../../src/runtime/server/lib/core/context'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { moduleRoutePaths, type RouteOptions } from '../../src/build/module-routes'
import { createPathMatcher } from '../../src/runtime/server/lib/edge/path-matcher'
import { issueRefreshToken } from '../../src/runtime/server/lib/core/records/refresh-token'
import { useAuthContext } from '../../src/runtime/server/utils/auth-context'
import middleware from '../../src/runtime/server/middleware/route-protection'
import { fakeEvent } from './helpers/event'

/** Whether the module answers on `path` with these options (as the build lists it for the request middleware). */
const isModuleRoute = (options: RouteOptions, path: string) => createPathMatcher(moduleRoutePaths(options))(path)

// The request middleware as Nitro runs it, on the options of an app with OAuth providers, the mock
// provider and the password provider (memory store).
vi.mock('nitropack/runtime', async () => {
  const { resolveOptions } = await import('../../src/build/resolve-options')
  const svcAuth = resolveOptions({
    token: { secret: 'ssr-middleware-secret-0123456789-abcdefgh' },
    tokenRefresh: { storage: { driver: 'memory' } },
    logging: { level: 'silent' },
    providers: {
      google: { clientId: 'id', clientSecret: 'secret' },
      mock: { mockUsers: [{ sub: 'ada', email: 'ada@example.com', name: 'Ada' }] },
      password: {},
      custom: [{ name: 'acme', issuer: 'https://id.acme.test', clientId: 'id', clientSecret: 'secret' }],
    },
  }, true)
  // The paths the build lists in `#svc-auth/features` for these options.
  const { setRoutePaths } = await import('./helpers/features')
  const { moduleRoutePaths } = await import('../../src/build/module-routes')
  setRoutePaths(moduleRoutePaths(svcAuth))
  return {
    getRouteRules: () => ({}),
    useRuntimeConfig: () => ({ svcAuth }),
    useNitroApp: () => ({ hooks: { callHook: async () => {} } }),
  }
})

let ctx: AuthContext
let cookie = ''
const customClaims = vi.fn(() => ({ role: 'member' }))

beforeAll(async () => {
  ctx = await useAuthContext()
  const { token } = await issueRefreshToken(ctx, { user: { sub: 'u1', email: 'u1@example.com' }, userId: 'u1', claims: {} })
  cookie = `svc-refresh=${token}`
})

afterAll(() => ctx.dispose())

afterEach(() => {
  vi.restoreAllMocks()
  customClaims.mockClear()
  resetAuthHandlers()
})

/** Runs the middleware on a browser's page navigation to `url` with the refresh cookie. */
async function navigate(url: string, init: { method?: string, accept?: string } = {}): Promise<H3Event> {
  const event = fakeEvent({ method: init.method ?? 'GET', url, headers: { accept: init.accept ?? 'text/html,application/xhtml+xml', cookie } })
  await middleware(event)
  return event
}

/** Counts what minting an SSR token costs: store reads, signatures, the customClaims handler. */
function watch() {
  defineAuthHandlers({ customClaims })
  return { reads: vi.spyOn(ctx.store, 'read'), signs: vi.spyOn(ctx.tokens, 'sign') }
}

describe('SSR token of the request middleware', () => {
  it('is minted for a page whose path only starts like a module route', async () => {
    for (const url of ['/authors', '/', '/auth', '/auth/googlex', '/auth/google/profile', '/mock', '/dashboard?tab=1']) {
      const { reads, signs } = watch()
      const event = await navigate(url)
      expect(event.context.ssrAccessToken, url).toBeTypeOf('string')
      expect(reads, url).toHaveBeenCalled()
      expect(signs, url).toHaveBeenCalledOnce()
      expect(customClaims, url).toHaveBeenCalledOnce()
      vi.restoreAllMocks()
      customClaims.mockClear()
    }
  })

  it('is not minted for the module\'s own routes: no store read, no customClaims, no signature', async () => {
    const moduleRoutes = [
      '/auth/google', // a login hop with the refresh cookie
      '/auth/google/', // a trailing slash reaches the same route
      '/auth/google?redirect=%2Fdashboard',
      '/auth/acme', // custom provider
      '/auth/mock',
      '/mock/authorize?client_id=mock-client',
      '/mock/userinfo',
      '/auth/callback?code=abc',
      '/auth/password/login-verify?code=123456&flow=f',
      '/auth/password/register-verify?code=123456',
      '/auth/password/reset-verify?code=123456',
      '/auth/sessions',
      '/auth/sessions/some-session-id',
      '/auth/refresh',
      '/auth/token',
      '/auth/logout',
      '/auth/impersonate',
      '/.well-known/jwks.json',
      '/api/user/me',
    ]
    for (const url of moduleRoutes) {
      const { reads, signs } = watch()
      const event = await navigate(url)
      expect(event.context.ssrAccessToken, url).toBeUndefined()
      expect(reads, url).not.toHaveBeenCalled()
      expect(signs, url).not.toHaveBeenCalled()
      expect(customClaims, url).not.toHaveBeenCalled()
    }
  })

  it('is not minted for requests that are not page navigations', async () => {
    const { reads, signs } = watch()
    expect((await navigate('/authors', { accept: 'application/json' })).context.ssrAccessToken).toBeUndefined()
    expect((await navigate('/authors', { method: 'POST' })).context.ssrAccessToken).toBeUndefined()
    expect((await navigate('/_nuxt/entry.js')).context.ssrAccessToken).toBeUndefined()
    expect(reads).not.toHaveBeenCalled()
    expect(signs).not.toHaveBeenCalled()
  })
})

describe('module routes', () => {
  it('are derived from the options: core endpoints, callback, providers, password and mock routes', () => {
    const paths = moduleRoutePaths(ctx.options)
    expect(paths).toEqual(expect.arrayContaining([
      '/auth/token', '/auth/refresh', '/auth/logout', '/api/user/me', '/.well-known/jwks.json',
      '/auth/impersonate', '/auth/unimpersonate', '/auth/sessions', '/auth/sessions/revoke-others',
      '/auth/sessions/:id', '/auth/callback', '/auth/google', '/auth/mock', '/auth/acme',
      '/auth/password/login', '/auth/password/login-verify', '/auth/password/change',
      '/mock/authorize', '/mock/token', '/mock/userinfo',
    ]))
    expect(paths).not.toContain('/auth/github')
  })

  it('follow configured paths and leave out providers that are not configured', () => {
    const options = {
      endpoints: { ...ctx.options.endpoints, loginPath: '/login/', authPath: '/account', callbackPath: '/welcome' },
      providers: { github: { clientId: 'id', clientSecret: 'secret' } },
    }
    expect(isModuleRoute(options, '/login/github')).toBe(true)
    expect(isModuleRoute(options, '/welcome')).toBe(true)
    expect(isModuleRoute(options, '/auth/google')).toBe(false)
    expect(isModuleRoute(options, '/account/password/login')).toBe(false)
    expect(isModuleRoute(options, '/mock/authorize')).toBe(false)
  })

  it('match whole paths: `:name` is exactly one segment, a trailing slash and the query are ignored', () => {
    const match = createPathMatcher(['/auth/sessions/:id', '/auth/google'])
    expect(match('/auth/sessions/abc')).toBe(true)
    expect(match('/auth/sessions/abc/')).toBe(true)
    expect(match('/auth/sessions/abc/def')).toBe(false)
    expect(match('/auth/sessions')).toBe(false)
    expect(match('/auth/google?x=1')).toBe(true)
    expect(match('/auth/googles')).toBe(false)
    expect(match('/auth')).toBe(false)
    expect(createPathMatcher(['/a.b'])('/axb')).toBe(false)
  })
})
