import { describe, expect, it, vi } from 'vitest'
import { resolveOptions } from '../../src/build/resolve-options'
import { createAuthContext } from '../../src/runtime/server/lib/core/context'
import { issueRefreshToken, readRefreshToken } from '../../src/runtime/server/lib/core/records/refresh-token'
import { clearTossedRefreshCookies, readRefreshCookie, refreshCookieValues } from '../../src/runtime/server/lib/core/session-tokens'
import { useAuthContext } from '../../src/runtime/server/utils/auth-context'
import logoutRoute from '../../src/runtime/server/routes/logout.post'
import { createStoreBackend } from '../../src/runtime/server/lib/store'
import { hostPrefixAdvice, refreshCookieNameErrors, validateOptions } from '../../src/runtime/server/lib/config/validate-options'
import { cookieValues, hasCookie } from '../../src/runtime/shared/presence'
import { unitContext } from './helpers/context'
import { fakeEvent, setCookies } from './helpers/event'
import { features } from './helpers/features'

// Cookie tossing: a sibling subdomain sets `svc-refresh` for the parent domain with a longer path,
// and the browser sends it before the site's own. The request is never served from either.

// The routes as Nitro runs them (their auth context from this runtime config).
vi.mock('nitropack/runtime', async () => {
  const { resolveOptions } = await import('../../src/build/resolve-options')
  const svcAuth = resolveOptions({ token: { secret: 'tossing-unit-secret-0123456789-abcdefghij' }, tokenRefresh: { storage: { driver: 'memory' } }, logging: { level: 'silent' } }, true)
  return {
    getRouteRules: () => ({}),
    useRuntimeConfig: () => ({ svcAuth, app: { baseURL: '/' } }),
    useNitroApp: () => ({ hooks: { callHook: async () => {} } }),
  }
})

const ATTACKER = 'a'.repeat(43)
const VICTIM = 'v'.repeat(43)

describe('cookieValues', () => {
  it('lists every cookie of a name in the order sent; hasCookie wants a non-empty one', () => {
    expect(cookieValues(`svc-refresh=${ATTACKER}; other=1; svc-refresh=${VICTIM}`, 'svc-refresh')).toEqual([ATTACKER, VICTIM])
    expect(cookieValues('svc-refresh-present=1', 'svc-refresh')).toEqual([])
    expect(cookieValues(undefined, 'svc-refresh')).toEqual([])
    expect(hasCookie('svc-refresh=; x=1', 'svc-refresh')).toBe(false)
    expect(hasCookie('x=1;svc-refresh=t', 'svc-refresh')).toBe(true)
  })
})

describe('the refresh cookie of a request', () => {
  it('is read only when exactly one comes', async () => {
    const ctx = await unitContext()
    const event = (cookie: string) => fakeEvent({ headers: { cookie } })
    expect(readRefreshCookie(event(`svc-refresh=${VICTIM}`), ctx)).toBe(VICTIM)
    expect(readRefreshCookie(event(`svc-refresh=${ATTACKER}; svc-refresh=${VICTIM}`), ctx)).toBeUndefined()
    expect(refreshCookieValues(event(`svc-refresh=${ATTACKER}; svc-refresh=${VICTIM}`), ctx)).toEqual([ATTACKER, VICTIM])
    expect(readRefreshCookie(event(`svc-refresh=${'x'.repeat(600)}`), ctx)).toBeUndefined()
  })

  it('is deleted where a planted one may sit: every parent domain and every path above the request', async () => {
    const ctx = await unitContext()
    const event = fakeEvent({ method: 'POST', url: '/auth/refresh', headers: { host: 'app.example.com', cookie: `svc-refresh=${ATTACKER}; svc-refresh=${VICTIM}` } })
    clearTossedRefreshCookies(event, ctx)
    const deletions = setCookies(event).filter(line => line.startsWith('svc-refresh=;'))
    const places = deletions.map((line) => {
      const attrs = Object.fromEntries(line.split(';').slice(1).map(part => part.trim().split('=')).map(([k, v]) => [k!.toLowerCase(), v ?? true]))
      expect(attrs['max-age']).toBe('0')
      return `${attrs.domain ?? '(host)'} ${attrs.path}`
    })
    // A path with a trailing slash is a place of its own (`Path=/auth/` is sent to /auth/refresh too).
    expect(places.sort()).toEqual([
      '(host) /', '(host) /auth', '(host) /auth/', '(host) /auth/refresh',
      'app.example.com /', 'app.example.com /auth', 'app.example.com /auth/', 'app.example.com /auth/refresh',
      'example.com /', 'example.com /auth', 'example.com /auth/', 'example.com /auth/refresh',
    ])
    // The presence flag goes too.
    expect(setCookies(event).some(line => line.startsWith('svc-refresh-present=;'))).toBe(true)
  })

  it('a __Host- cookie exists only host-only for /: nothing else to delete', async () => {
    const ctx = await unitContext({ tokenRefresh: { storage: { driver: 'memory' }, cookie: { cookieName: '__Host-svc-refresh', secure: true, path: '/' } } })
    const event = fakeEvent({ method: 'POST', url: '/auth/refresh', headers: { host: 'app.example.com' } })
    clearTossedRefreshCookies(event, ctx)
    const deletions = setCookies(event).filter(line => line.startsWith('__Host-svc-refresh=;'))
    expect(deletions).toHaveLength(1)
    expect(deletions[0]).toContain('Path=/')
    expect(deletions[0]).toContain('Secure')
    expect(deletions[0]).not.toContain('Domain')
  })
})

describe('logout with planted refresh cookies', () => {
  it('ends the session of the site\'s own cookie behind every cookie a sibling can plant ahead of it', async () => {
    const ctx = await useAuthContext()
    try {
      const own = await issueRefreshToken(ctx, { user: { sub: 'victim' }, userId: 'victim', claims: {} })
      // One per place a browser sends before the site's own: the parent domain and the host's own
      // children's domain, each with every path above /auth/logout; made up, but shaped like tokens.
      const planted = Array.from({ length: 8 }, (_, i) => String(i).repeat(43))
      const event = fakeEvent({ method: 'POST', url: '/auth/logout', headers: { host: 'app.example.com', cookie: [...planted, 'junk', own.token].map(value => `svc-refresh=${value}`).join('; ') } })
      expect(await logoutRoute(event)).toEqual({ success: true })
      expect(await readRefreshToken(ctx, own.token)).toBeNull()
      expect(setCookies(event).some(line => line.startsWith('svc-refresh=;') && line.includes('Domain=example.com'))).toBe(true)
    }
    finally {
      await ctx.dispose()
    }
  })
})

describe('the refresh cookie name', () => {
  it('a __Host- name needs secure and path /; __Secure- needs secure; anything must be a cookie name', () => {
    expect(refreshCookieNameErrors({ cookieName: '__Host-svc-refresh', secure: true, path: '/' })).toEqual([])
    expect(refreshCookieNameErrors({ cookieName: '__Host-svc-refresh', secure: false, path: '/' })).toHaveLength(1)
    expect(refreshCookieNameErrors({ cookieName: '__Host-svc-refresh', secure: true, path: '/auth' })[0]).toContain('path \'/\'')
    expect(refreshCookieNameErrors({ cookieName: '__Secure-svc-refresh', secure: false, path: '/' })).toHaveLength(1)
    expect(refreshCookieNameErrors({ cookieName: 'svc refresh;', secure: true, path: '/' })).toHaveLength(1)
    const options = resolveOptions({ token: { secret: 'x'.repeat(32) }, tokenRefresh: { cookie: { cookieName: '__Host-svc-refresh', path: '/auth' } } }, true)
    expect(validateOptions(options).errors.some(error => error.includes('__Host-'))).toBe(true)
  })

  it('a production server with a Secure, unprefixed name logs one line pointing to the checklist', async () => {
    expect(hostPrefixAdvice({ cookieName: 'svc-refresh', secure: true })).toContain('__Host-svc-refresh')
    expect(hostPrefixAdvice({ cookieName: '__Host-svc-refresh', secure: true })).toBeUndefined()
    expect(hostPrefixAdvice({ cookieName: 'svc-refresh', secure: false })).toBeUndefined()

    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    try {
      const start = async (dev: boolean, cookieName: string) => {
        const options = resolveOptions({ token: { secret: 'unit-test-secret-0123456789-abcdefghijklm' }, tokenRefresh: { storage: { driver: 'memory' }, cookie: { cookieName } }, logging: { level: 'warn' } }, true)
        const ctx = await createAuthContext(options, { dev, backend: await createStoreBackend(options.tokenRefresh.storage), features })
        await ctx.dispose()
      }
      const lines = () => warn.mock.calls.map(call => String(call[0])).filter(line => line.includes('__Host-'))
      await start(false, 'svc-refresh')
      expect(lines()).toHaveLength(1)
      expect(lines()[0]).toContain('production checklist')
      await start(true, 'svc-refresh')
      await start(false, '__Host-svc-refresh')
      expect(lines()).toHaveLength(1)
    }
    finally {
      warn.mockRestore()
    }
  })
})
