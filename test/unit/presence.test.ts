import type { EventHandler, H3Event } from 'h3'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { mayHaveSession } from '../../src/runtime/app/lib/presence-hint'
import type { AuthContext } from '../../src/runtime/server/lib/core/context'
import { presenceCookiePath } from '../../src/runtime/server/lib/edge/presence-cookie'
import { issueRefreshToken } from '../../src/runtime/server/lib/core/records/refresh-token'
import { clearRefreshCookie, setRefreshCookie } from '../../src/runtime/server/lib/core/session-tokens'
import { hasCookie, presenceCookieName } from '../../src/runtime/shared/presence'
import { useAuthContext } from '../../src/runtime/server/utils/auth-context'
import middleware from '../../src/runtime/server/middleware/route-protection'
import refreshRoute from '../../src/runtime/server/routes/refresh.post'
import logoutRoute from '../../src/runtime/server/routes/logout.post'
import revokeRoute from '../../src/runtime/server/routes/sessions/revoke.delete'
import { fakeEvent, setCookies } from './helpers/event'
import { unitContext } from './helpers/context'

// The module's routes and middleware as Nitro runs them, in an app served under /app/.
const nitro = vi.hoisted(() => ({ svcAuth: undefined as unknown }))
vi.mock('nitropack/runtime', async () => {
  const { resolveOptions } = await import('../../src/build/resolve-options')
  nitro.svcAuth = resolveOptions({
    token: { secret: 'presence-unit-secret-0123456789-abcdefghij' },
    tokenRefresh: { storage: { driver: 'memory' }, cookie: { maxAge: 3600 } },
    logging: { level: 'silent' },
  }, true)
  // The paths the build lists in `#svc-auth/features` for these options.
  const { setRoutePaths } = await import('./helpers/features')
  const { moduleRoutePaths } = await import('../../src/build/module-routes')
  setRoutePaths(moduleRoutePaths(nitro.svcAuth as Parameters<typeof moduleRoutePaths>[0]))
  return {
    getRouteRules: () => ({}),
    useRuntimeConfig: () => ({ svcAuth: nitro.svcAuth, app: { baseURL: '/app/' } }),
    useNitroApp: () => ({ hooks: { callHook: async () => {} } }),
  }
})

const FLAG = 'svc-refresh-present'

/** The Set-Cookie line of `name` in a response (undefined when none). */
const lineOf = (event: H3Event, name: string) => setCookies(event).find(line => line.startsWith(`${name}=`))

/** Attributes of a Set-Cookie line, lowercased names: `{ 'max-age': '3600', path: '/app', … }`. */
function attributesOf(line: string | undefined): Record<string, string> {
  expect(line).toBeDefined()
  const [pair, ...rest] = line!.split(';').map(part => part.trim())
  const out: Record<string, string> = { value: pair!.slice(pair!.indexOf('=') + 1) }
  for (const part of rest) {
    const eq = part.indexOf('=')
    out[(eq < 0 ? part : part.slice(0, eq)).toLowerCase()] = eq < 0 ? '' : part.slice(eq + 1)
  }
  return out
}

async function call(handler: EventHandler, init: Parameters<typeof fakeEvent>[0], params?: Record<string, string>): Promise<{ event: H3Event, body: unknown }> {
  const event = fakeEvent(init)
  if (params) event.context.params = params
  const body = await handler(event)
  return { event, body }
}

describe('the flag and its name', () => {
  it('is named after the refresh cookie and read from a Cookie header or document.cookie', () => {
    expect(presenceCookieName('svc-refresh')).toBe(FLAG)
    expect(presenceCookieName('__Host-r')).toBe('__Host-r-present')
    expect(hasCookie('a=1; svc-refresh-present=1', FLAG)).toBe(true)
    expect(hasCookie('svc-refresh-present=1', FLAG)).toBe(true)
    expect(hasCookie('svc-refresh=abc', FLAG)).toBe(false)
    expect(hasCookie('svc-refresh-present-x=1; x-svc-refresh-present=1', FLAG)).toBe(false)
    expect(hasCookie('svc-refresh-present=', FLAG)).toBe(false)
    expect(hasCookie('', FLAG)).toBe(false)
    expect(hasCookie(undefined, FLAG)).toBe(false)
  })

  it('the browser starts with a refresh only when a session may exist', () => {
    // No flag, nobody rendered by the server: certainly no session, no request.
    expect(mayHaveSession('', FLAG, false)).toBe(false)
    expect(mayHaveSession('other=1', FLAG, false)).toBe(false)
    expect(mayHaveSession(`${FLAG}=1`, FLAG, false)).toBe(true)
    // The server rendered a user (its page request carried a live cookie): refresh, flag or not.
    expect(mayHaveSession('', FLAG, true)).toBe(true)
    // A configuration without the flag's name: as before, always.
    expect(mayHaveSession('', undefined, false)).toBe(true)
  })

  it('its path is the base URL without the trailing slash, so every page of the app reads it', () => {
    expect(presenceCookiePath({ cookieName: 'svc-refresh' }, '/')).toBe('/')
    expect(presenceCookiePath({ cookieName: 'svc-refresh' }, '/app/')).toBe('/app')
    expect(presenceCookiePath({ cookieName: 'svc-refresh' }, '/app')).toBe('/app')
    expect(presenceCookiePath({ cookieName: 'svc-refresh' }, '')).toBe('/')
    expect(presenceCookiePath({ cookieName: '__Host-refresh' }, '/app/')).toBe('/')
  })
})

describe('set and deleted with the refresh cookie', () => {
  let ctx: AuthContext
  beforeAll(async () => {
    ctx = await unitContext({ tokenRefresh: { storage: { driver: 'memory' }, cookie: { path: '/', maxAge: 1234, sameSite: 'strict' } } })
    ctx.baseURL = '/app/'
  })

  it('same lifetime, Secure and SameSite; readable by the page; path of the app', () => {
    const event = fakeEvent()
    setRefreshCookie(event, ctx, 'token-value')
    const refresh = attributesOf(lineOf(event, 'svc-refresh'))
    const flag = attributesOf(lineOf(event, FLAG))
    expect(refresh).toMatchObject({ 'value': 'token-value', 'max-age': '1234', 'path': '/', 'httponly': '', 'secure': '', 'samesite': 'Strict' })
    expect(flag).toMatchObject({ 'value': '1', 'max-age': '1234', 'path': '/app', 'secure': '', 'samesite': 'Strict' })
    expect(flag).not.toHaveProperty('httponly')
  })

  it('a shorter lifetime (an impersonation) applies to both', () => {
    const event = fakeEvent()
    setRefreshCookie(event, ctx, 'token-value', 900)
    expect(attributesOf(lineOf(event, 'svc-refresh'))['max-age']).toBe('900')
    expect(attributesOf(lineOf(event, FLAG))['max-age']).toBe('900')
  })

  it('deleting the refresh cookie deletes the flag, each on its own path', () => {
    const event = fakeEvent()
    clearRefreshCookie(event, ctx)
    expect(attributesOf(lineOf(event, 'svc-refresh'))).toMatchObject({ 'value': '', 'max-age': '0', 'path': '/' })
    expect(attributesOf(lineOf(event, FLAG))).toMatchObject({ 'value': '', 'max-age': '0', 'path': '/app' })
  })
})

describe('the endpoints and the request middleware', () => {
  let ctx: AuthContext
  beforeAll(async () => {
    ctx = await useAuthContext()
  })
  afterAll(() => ctx.dispose())

  const login = async (sub = 'pat') => (await issueRefreshToken(ctx, { user: { sub }, userId: sub, claims: {} })).token

  it('a refresh sets both again with the rotated cookie', async () => {
    const token = await login()
    const { event } = await call(refreshRoute, { method: 'POST', url: '/app/auth/refresh', headers: { cookie: `svc-refresh=${token}; ${FLAG}=1` } })
    expect(event.node.res.statusCode).toBe(200)
    expect(attributesOf(lineOf(event, 'svc-refresh')).value).not.toBe(token)
    expect(attributesOf(lineOf(event, FLAG))).toMatchObject({ 'value': '1', 'max-age': '3600', 'path': '/app' })
  })

  it('a forged or stale flag without a refresh cookie: 401, the flag deleted, the refresh cookie untouched', async () => {
    const { event } = await call(refreshRoute, { method: 'POST', url: '/app/auth/refresh', headers: { cookie: `${FLAG}=1` } })
    expect(event.node.res.statusCode).toBe(401)
    expect(attributesOf(lineOf(event, FLAG))).toMatchObject({ 'value': '', 'max-age': '0', 'path': '/app' })
    // A login in another tab may have set a refresh cookie since this request left.
    expect(lineOf(event, 'svc-refresh')).toBeUndefined()
  })

  it('a refused refresh cookie (unknown, reused): both deleted', async () => {
    const { event } = await call(refreshRoute, { method: 'POST', url: '/app/auth/refresh', headers: { cookie: `svc-refresh=unknown-token; ${FLAG}=1` } })
    expect(event.node.res.statusCode).toBe(401)
    expect(attributesOf(lineOf(event, 'svc-refresh'))['max-age']).toBe('0')
    expect(attributesOf(lineOf(event, FLAG))['max-age']).toBe('0')
  })

  it('logout deletes both', async () => {
    const token = await login()
    const { event } = await call(logoutRoute, { method: 'POST', url: '/app/auth/logout', headers: { cookie: `svc-refresh=${token}; ${FLAG}=1` } })
    expect(attributesOf(lineOf(event, 'svc-refresh'))['max-age']).toBe('0')
    expect(attributesOf(lineOf(event, FLAG))).toMatchObject({ 'max-age': '0', 'path': '/app' })
  })

  it('ending the current session deletes both when the request carries that session\'s cookie, and only then', async () => {
    const bearerOf = async (token: string) => {
      const { body } = await call(refreshRoute, { method: 'POST', url: '/app/auth/refresh', headers: { cookie: `svc-refresh=${token}` } })
      return (body as { token: string }).token
    }
    const sidOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()).sid as string
    // This browser's session.
    const mine = await login('sam')
    const access = await bearerOf(mine)
    const { event } = await call(revokeRoute, { method: 'DELETE', url: `/app/auth/sessions/${sidOf(access)}`, headers: { authorization: `Bearer ${access}`, cookie: `svc-refresh=${mine}` } }, { id: sidOf(access) })
    expect(event.node.res.statusCode).toBe(200)
    expect(attributesOf(lineOf(event, 'svc-refresh'))['max-age']).toBe('0')
    expect(attributesOf(lineOf(event, FLAG))['max-age']).toBe('0')

    // A token of one session, sent by a browser whose cookie is another, live one (another tab
    // logged in since): that cookie stays.
    const first = await login('sam')
    const firstAccess = await bearerOf(first)
    const second = await login('sam')
    const other = await call(revokeRoute, { method: 'DELETE', url: `/app/auth/sessions/${sidOf(firstAccess)}`, headers: { authorization: `Bearer ${firstAccess}`, cookie: `svc-refresh=${second}` } }, { id: sidOf(firstAccess) })
    expect(other.event.node.res.statusCode).toBe(200)
    expect(setCookies(other.event)).toEqual([])
  })

  describe('sessions that began before the flag existed', () => {
    const page = (cookie: string, init: { url?: string, accept?: string, method?: string } = {}) =>
      call(middleware, { method: init.method ?? 'GET', url: init.url ?? '/app/dashboard', headers: { accept: init.accept ?? 'text/html', cookie } })

    it('a page request with the refresh cookie and no flag gets the flag', async () => {
      const { event } = await page(`svc-refresh=${await login()}`)
      expect(attributesOf(lineOf(event, FLAG))).toMatchObject({ 'value': '1', 'max-age': '3600', 'path': '/app' })
      expect(attributesOf(lineOf(event, FLAG))).not.toHaveProperty('httponly')
      // The SSR token is made as before.
      expect(event.context.ssrAccessToken).toMatch(/^eyJ/)
    })

    it('nothing is set with the flag already there, without a refresh cookie, or on requests that are not pages', async () => {
      const token = await login()
      for (const { event } of [
        await page(`svc-refresh=${token}; ${FLAG}=1`),
        await page(''),
        await page(`${FLAG}=1`),
        await page(`svc-refresh=${token}`, { accept: 'application/json', url: '/app/api/notes' }),
        await page(`svc-refresh=${token}`, { method: 'POST' }),
        await page(`svc-refresh=${token}`, { url: '/auth/refresh' }),
      ]) expect(setCookies(event)).toEqual([])
    })
  })
})
