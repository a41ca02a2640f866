import { describe, expect, expectTypeOf, it, vi } from 'vitest'
import type { AuthAccessRule, AuthPageMeta, AuthRouteRule } from '../../src/runtime/types/auth'
import { routeAccess, authMetaOf, namedMiddlewareOf } from '../../src/runtime/app/lib/access'
import { createAuthFetchCore, shareRefresh, statusOf, withBearer, type AuthFetchDeps, type AuthFetchOptions, type RefreshHolder, type RefreshOutcome } from '../../src/runtime/app/lib/auth-fetch'
import { decodeTokenClaims, userFromToken } from '../../src/runtime/app/lib/token-payload'
import { isAuthEndpoint, isPublicRoute, isSameOriginRequest, loginUrl, refreshErrorUrl, safeRedirect } from '../../src/runtime/app/lib/route-paths'
import { originalUserOf } from '../../src/runtime/shared/original-user'
import { isPathUnder, matchesRouteGlob, normalizePath, stripBase, withQuery } from '../../src/runtime/shared/paths'
import { accessTokenOf } from '../../src/runtime/shared/token-response'
import { accessRuleOf, can, isAuthEndpoint as isOrgAuthEndpoint, meets, permissionDenied } from '../../src/runtime/organizations/app/organization-access'
import { dePages } from '../../src/runtime/i18n/de-pages'
import { defaultOptions } from '../../src/build/resolve-options'

const endpoints = defaultOptions.endpoints

// The page texts of a build with German, and the app's `@nuxtjs/i18n` locale (none: no `$i18n`).
const app = vi.hoisted(() => ({ $i18n: undefined as { locale: { value: string } } | undefined }))
vi.mock('#imports', () => ({ useNuxtApp: () => app }))
vi.mock('#build/svc-auth/page-texts.mjs', async () => ({ default: { de: (await import('../../src/runtime/i18n/de-pages')).dePages } }))

function jwt(payload: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${part({ alg: 'HS256', typ: 'at+jwt' })}.${part(payload)}.signature`
}

describe('route globs', () => {
  it.each([
    ['/', '/', true],
    ['/', '/about', false],
    ['/about', '/about', true],
    ['/about', '/about/', true],
    ['/about', '/about?x=1#top', true],
    ['/about', '/about/team', false],
    ['/about', '/aboutus', false],
    ['/blog/*', '/blog/post', true],
    ['/blog/*', '/blog', false],
    ['/blog/*', '/blog/a/b', false],
    ['/blog/**', '/blog', true],
    ['/blog/**', '/blog/a/b/c', true],
    ['/blog/**', '/blogs', false],
    ['/docs/*/edit', '/docs/intro/edit', true],
    ['/docs/*/edit', '/docs/a/b/edit', false],
    ['/docs/**/edit', '/docs/a/b/edit', true],
    ['/docs/**/edit', '/docs/edit', true],
    ['/files/*.pdf', '/files/report.pdf', true],
    ['/files/*.pdf', '/files/reportXpdf', false],
    ['/a+b/(x)', '/a+b/(x)', true],
    ['/**', '/anything/at/all', true],
    ['/**', '/', true],
    ['/*', '/', false],
    ['/a//b', '/a/b/', true],
    ['/a/b', '/a//b', true],
    ['/a/**/**/b', '/a/b', true],
    ['/a/**/b/**', '/a/x/b', true],
    ['/a/**/b', '/a/x/c', false],
    ['/a*b', '/aXYb', true],
    ['/a*b', '/a/b', false],
    ['/$^|[x]', '/$^|[x]', true],
    ['/a.c', '/abc', false],
  ])('%s matches %s: %s', (pattern, path, expected) => {
    expect(matchesRouteGlob(pattern, path)).toBe(expected)
  })

  it('checks a path against a list of publicRoutes', () => {
    expect(isPublicRoute('/public/x', ['/', '/public/**'])).toBe(true)
    expect(isPublicRoute('/dashboard', ['/', '/public/**'])).toBe(false)
    expect(isPublicRoute('/dashboard', [])).toBe(false)
    expect(isPublicRoute('/dashboard', undefined)).toBe(false)
  })

  it('normalizes paths and strips the app base URL', () => {
    expect(normalizePath('/a/b/?q#h')).toBe('/a/b')
    expect(normalizePath('')).toBe('/')
    expect(normalizePath('//')).toBe('/')
    expect(normalizePath('/a//?x=/')).toBe('/a')
    expect(stripBase('/app/dashboard', '/app/')).toBe('/dashboard')
    expect(stripBase('/app', '/app/')).toBe('/')
    expect(stripBase('/application', '/app/')).toBe('/application')
    expect(stripBase('/dashboard', '/')).toBe('/dashboard')
  })
})

describe('URL rules', () => {
  it('sends the token only to same-origin relative URLs', () => {
    expect(isSameOriginRequest('/api/user/me')).toBe(true)
    expect(isSameOriginRequest('/api/x', '/base/')).toBe(true)
    for (const url of ['https://evil.example/api', '//evil.example/api', '/\\evil.example', 'api/x', '', '/%2F%2Fevil.example']) {
      expect(isSameOriginRequest(url), url).toBe(false)
    }
    expect(isSameOriginRequest('/api/x', 'https://evil.example')).toBe(false)
    expect(isSameOriginRequest(new Request('https://evil.example/'))).toBe(false)
  })

  it('recognizes the authentication endpoints by whole path segments', () => {
    for (const path of ['/auth/refresh', '/auth/token', '/auth/logout', '/auth/callback', '/auth/impersonate', '/auth/unimpersonate', '/auth/password/change', '/auth/mock', '/auth/refresh?x=1']) {
      expect(isAuthEndpoint(path, endpoints), path).toBe(true)
    }
    for (const path of ['/api/user/me', '/authors', '/api/auth', '/']) {
      expect(isAuthEndpoint(path, endpoints), path).toBe(false)
    }
    const custom = { ...endpoints, authPath: '/session', loginPath: '/login-with', refreshPath: '/api/renew' }
    expect(isAuthEndpoint('/api/renew', custom)).toBe(true)
    expect(isAuthEndpoint('/login-with/github', custom)).toBe(true)
    expect(isAuthEndpoint('/session/token', custom)).toBe(true)
    expect(isAuthEndpoint('/auth/anything', custom)).toBe(false)
    expect(isAuthEndpoint('/refresh', endpoints, '/auth')).toBe(true)
  })

  it('treats the session endpoints as ordinary APIs (a 401 there refreshes and retries)', () => {
    const withSessions = { ...endpoints, sessionsPath: '/auth/sessions' }
    for (const path of ['/auth/sessions', '/auth/sessions/abc', '/auth/sessions/revoke-others']) {
      expect(isAuthEndpoint(path, withSessions), path).toBe(false)
    }
    expect(isAuthEndpoint('/auth/sessionsx', withSessions)).toBe(true)
    expect(isAuthEndpoint('/auth/refresh', withSessions)).toBe(true)
  })

  it('builds the refresh failure URL of rule 6', () => {
    expect(refreshErrorUrl('/')).toBe('/?error=token_refresh_failed&error_description=Your%20session%20has%20expired.%20Please%20log%20in%20again.')
    expect(refreshErrorUrl('/login?tab=2', 'a&b')).toBe('/login?tab=2&error=token_refresh_failed&error_description=a%26b')
    expect(refreshErrorUrl('https://evil.example/')).toMatch(/^\/\?error=token_refresh_failed&/)
  })

  it('appends query parameters before the hash and skips undefined ones', () => {
    expect(withQuery('/a#h', { x: '1 2', y: undefined })).toBe('/a?x=1%202#h')
    expect(withQuery('/a', {})).toBe('/a')
  })

  it('only follows relative redirect targets', () => {
    expect(safeRedirect('/profile?tab=1', '/')).toBe('/profile?tab=1')
    for (const target of ['https://evil.example', '//evil.example', '/\\evil.example', 'javascript:alert(1)', 42, undefined, '/%2F%2Fevil']) {
      expect(safeRedirect(target, '/home'), String(target)).toBe('/home')
    }
    expect(safeRedirect('/auth/callback?code=x', '/home', ['/auth/callback'])).toBe('/home')
  })

  it('builds provider login URLs with a relative redirect only', () => {
    expect(loginUrl('/auth', 'github')).toBe('/auth/github')
    expect(loginUrl('/auth/', 'mock', { redirect: '/admin', query: { user: '1' } })).toBe('/auth/mock?user=1&redirect=%2Fadmin')
    expect(loginUrl('/auth', 'mock', { redirect: 'https://evil.example' })).toBe('/auth/mock')
    expect(loginUrl('/auth', '../x')).toBe('/auth/..%2Fx')
  })
})

describe('token claims', () => {
  it('decodes the payload (UTF-8 included) and hides the token and session ids', () => {
    const token = jwt({ sub: 'u1', name: 'Zoë Åländ', jti: 'j', sid: 's', role: 'admin', exp: 1 })
    expect(decodeTokenClaims(token)).toMatchObject({ sub: 'u1', name: 'Zoë Åländ', jti: 'j', sid: 's' })
    expect(userFromToken(token)).toEqual({ sub: 'u1', name: 'Zoë Åländ', role: 'admin', exp: 1 })
    expect(userFromToken(undefined)).toBeNull()
    // Every base64url length that can occur, and characters that need more than two bytes.
    for (const name of ['a', 'ab', 'abc', 'abcd', '日本語', '🙂 emoji']) expect(decodeTokenClaims(jwt({ sub: 'u', name }))?.name).toBe(name)
  })

  it('keeps a `__proto__` claim as an own property instead of changing the user object\'s prototype', () => {
    const payload = Buffer.from('{"sub":"u1","__proto__":{"role":"admin"}}').toString('base64url')
    const user = userFromToken(`x.${payload}.y`)
    expect(Object.getPrototypeOf(user)).toBe(Object.prototype)
    expect(user?.role).toBeUndefined()
    expect(Object.keys(user ?? {})).toEqual(['sub', '__proto__'])
  })

  it('answers null for anything that is not a JWT with a subject', () => {
    const segment = (text: string | Buffer) => Buffer.from(text).toString('base64url')
    for (const value of [
      undefined, '', 'abc', 'a.b', 'a.!!!.c', jwt({ name: 'no sub' }), `x.${segment('[1]')}.y`,
      `x.${segment('"text"')}.y`, `x.${segment('null')}.y`, `x.${segment('{"sub":')}.y`, `x.${segment('{"sub":""}')}.y`,
      `x.${segment(JSON.stringify({ sub: 'u1' }))}.y.z.w`, // JWE (five segments)
      `x.${segment(Buffer.from([0x7B, 0xFF, 0x7D]))}.y`, // not UTF-8
      `x.${segment(JSON.stringify({ sub: 'u1' }))}a.y`, // impossible base64 length
      `x.${Buffer.from(JSON.stringify({ sub: 'u12' })).toString('base64')}.y`, // base64 with padding, not base64url
    ]) {
      expect(decodeTokenClaims(value)).toBeNull()
    }
  })

  it('reads the original user of an impersonated token', () => {
    const impersonation = { originalUserSub: 'admin', originalUserLookupId: 'admin', originalUserName: 'Ada', originalUserEmail: 'ada@example.com', impersonatedAt: '2025-01-01T00:00:00Z' }
    expect(originalUserOf({ sub: 'bob', impersonation })).toEqual({ sub: 'admin', name: 'Ada', email: 'ada@example.com' })
    expect(originalUserOf({ sub: 'bob' })).toBeNull()
    expect(originalUserOf(null)).toBeNull()
  })
})

describe('route access of the client middleware', () => {
  const middleware = { global: false, redirectTo: '/login', publicRoutes: ['/public/**'] }
  const exempt = ['/auth/callback', '/error']
  const access = (path: string, meta?: unknown, named?: 'auth' | 'guest', global = false) =>
    routeAccess({ path, meta, named, middleware: { ...middleware, global }, exempt })

  it('protects pages that ask for it, or every page with `global`', () => {
    expect(access('/dashboard')).toBe('open')
    expect(access('/dashboard', { auth: true })).toBe('protected')
    expect(access('/dashboard', {}, 'auth')).toBe('protected')
    expect(access('/dashboard', {}, undefined, true)).toBe('protected')
  })

  it('reads the meta as route rules are read: true | \'required\' | \'protected\' protect, false | \'public\' | \'skip\' open', () => {
    for (const auth of [true, 'required', 'protected']) expect(access('/dashboard', { auth }), String(auth)).toBe('protected')
    for (const auth of [false, 'public', 'skip']) expect(access('/dashboard', { auth }, 'auth', true), String(auth)).toBe('open')
    expect(authMetaOf({ auth: 'protected' })).toBe('required')
    expect(authMetaOf({ auth: 'skip' })).toBe('public')
  })

  it('honours opt-outs, publicRoutes, the login page and the exempt pages', () => {
    expect(access('/dashboard', { auth: false }, 'auth', true)).toBe('open')
    expect(access('/public/a/b', {}, undefined, true)).toBe('open')
    expect(access('/public/a', { auth: true })).toBe('open')
    expect(access('/login', {}, undefined, true)).toBe('open')
    expect(access('/login/', {}, 'auth')).toBe('open')
    expect(access('/auth/callback', { auth: true }, 'auth', true)).toBe('open')
    expect(access('/error', {}, undefined, true)).toBe('open')
  })

  it('keeps guest pages for logged-out visitors', () => {
    expect(access('/login', { auth: 'guest' }, undefined, true)).toBe('guest')
    expect(access('/signup', { middleware: 'guest' }, undefined, true)).toBe('guest')
    expect(access('/signup', { middleware: ['x', 'guest'] }, undefined, true)).toBe('guest')
    expect(access('/named', { middleware: ['auth'] })).toBe('protected')
    expect(namedMiddlewareOf({ middleware: [() => {}] })).toBeUndefined()
    expect(access('/register', {}, 'guest')).toBe('guest')
    expect(access('/public/signup', { auth: 'guest' })).toBe('guest')
  })

  it('ignores unknown meta values', () => {
    expect(authMetaOf({ auth: 'yes' })).toBeUndefined()
    expect(authMetaOf(null)).toBeUndefined()
    expect(access('/x', { auth: 'yes' })).toBe('open')
  })
})

describe('shared refresh', () => {
  it('shares one in-flight refresh between concurrent callers and frees the holder afterwards', async () => {
    const holder: RefreshHolder = { pending: null }
    let resolve!: (outcome: RefreshOutcome) => void
    const refresh = vi.fn(() => new Promise<RefreshOutcome>((r) => {
      resolve = r
    }))
    const calls = Array.from({ length: 5 }, () => shareRefresh(holder, refresh))
    expect(refresh).toHaveBeenCalledTimes(1)
    resolve({ token: 'new' })
    const outcomes = await Promise.all(calls)
    expect(new Set(outcomes).size).toBe(1)
    expect(outcomes[0]).toEqual({ token: 'new' })
    expect(holder.pending).toBeNull()
    refresh.mockImplementation(async () => ({ token: 'newer' }))
    expect(await shareRefresh(holder, refresh)).toEqual({ token: 'newer' })
    expect(refresh).toHaveBeenCalledTimes(2)
  })

  it('turns a throwing refresh into a failed outcome', async () => {
    const holder: RefreshHolder = { pending: null }
    const outcome = await shareRefresh(holder, async () => {
      throw new Error('offline')
    })
    expect(outcome).toEqual({ token: null, message: 'offline' })
    expect(holder.pending).toBeNull()
  })
})

class FakeHttpError extends Error {
  constructor(public status: number) {
    super(`HTTP ${status}`)
  }

  get response() {
    return { status: this.status }
  }
}

interface Sent {
  url: string
  authorization: string | null
  options: AuthFetchOptions
}

/** A server that answers 401 to every token but `valid`, and a refresh that returns `valid`. */
function harness(overrides: Partial<AuthFetchDeps> = {}, opts: { refreshResult?: RefreshOutcome, refreshDelay?: number } = {}) {
  const state = { token: 'expired' as string | null }
  const sent: Sent[] = []
  const holder: RefreshHolder = { pending: null }
  const refreshCalls = vi.fn(async (): Promise<RefreshOutcome> => {
    await new Promise(r => setTimeout(r, opts.refreshDelay ?? 5))
    const outcome = opts.refreshResult ?? { token: 'valid' }
    state.token = outcome.token
    return outcome
  })
  const failures: Array<{ outcome: RefreshOutcome, hadSession: boolean }> = []
  const send = vi.fn(async (request: string | Request, options: AuthFetchOptions) => {
    const authorization = new Headers(options.headers).get('authorization')
    sent.push({ url: String(request), authorization, options })
    if (String(request).includes('network')) throw new TypeError('fetch failed')
    if (String(request).includes('boom')) throw new FakeHttpError(500)
    if (String(request).includes('/auth/') || String(request).includes('/api/')) {
      if (authorization !== 'Bearer valid') throw new FakeHttpError(401)
    }
    return { ok: String(request) }
  })
  const deps: AuthFetchDeps = {
    automaticRefresh: true,
    getToken: () => state.token,
    pendingRefresh: () => holder.pending,
    refresh: () => shareRefresh(holder, refreshCalls),
    hasSession: () => false,
    onRefreshFailed: (outcome, { hadSession }) => {
      failures.push({ outcome, hadSession })
    },
    isAuthEndpoint: (request, baseURL) => isAuthEndpoint(request, endpoints, baseURL),
    ...overrides,
  }
  return { state, sent, send, deps, holder, refreshCalls, failures, authFetch: createAuthFetchCore(send, deps) }
}

describe('fetch helper rules', () => {
  it('rule 1: a bearer token when one is in memory, none otherwise, never to another host', async () => {
    const h = harness()
    h.state.token = 'valid'
    await h.authFetch('/api/a')
    h.state.token = null
    await h.authFetch('/public')
    h.state.token = 'valid'
    await h.authFetch('https://evil.example/data')
    await h.authFetch('/data', { baseURL: 'https://evil.example' })
    expect(h.sent.map(s => s.authorization)).toEqual(['Bearer valid', null, null, null])
  })

  it('rule 3: a 401 triggers one refresh and one retry with the new token', async () => {
    const h = harness()
    expect(await h.authFetch('/api/data')).toEqual({ ok: '/api/data' })
    expect(h.refreshCalls).toHaveBeenCalledTimes(1)
    expect(h.sent.map(s => s.authorization)).toEqual(['Bearer expired', 'Bearer valid'])
  })

  it('rule 3: the retry is not retried again when it fails too', async () => {
    const h = harness({}, { refreshResult: { token: 'still-bad' } })
    await expect(h.authFetch('/api/data')).rejects.toMatchObject({ status: 401 })
    expect(h.refreshCalls).toHaveBeenCalledTimes(1)
    expect(h.sent).toHaveLength(2)
    expect(h.failures).toHaveLength(0)
  })

  it('rule 4: five concurrent 401s share one refresh, then each retries once', async () => {
    const h = harness()
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => h.authFetch(`/api/item/${i}`)))
    expect(answers).toHaveLength(5)
    expect(h.refreshCalls).toHaveBeenCalledTimes(1)
    expect(h.sent.filter(s => s.authorization === 'Bearer expired')).toHaveLength(5)
    expect(h.sent.filter(s => s.authorization === 'Bearer valid')).toHaveLength(5)
  })

  it('rule 4: requests wait for a refresh in flight and carry its token', async () => {
    const h = harness({}, { refreshDelay: 20 })
    void h.deps.refresh()
    expect(await h.authFetch('/api/data')).toEqual({ ok: '/api/data' })
    expect(h.sent.map(s => s.authorization)).toEqual(['Bearer valid'])
    expect(h.refreshCalls).toHaveBeenCalledTimes(1)
  })

  it('rule 4: a 401 that arrives after another request already refreshed reuses the new token', async () => {
    const h = harness()
    const send = vi.fn(async (_request: string | Request, options: AuthFetchOptions) => {
      const authorization = new Headers(options.headers).get('authorization')
      if (authorization === 'Bearer expired') {
        h.state.token = 'valid'
        throw new FakeHttpError(401)
      }
      return authorization
    })
    const authFetch = createAuthFetchCore(send, h.deps)
    expect(await authFetch('/api/late')).toBe('Bearer valid')
    expect(h.refreshCalls).not.toHaveBeenCalled()
  })

  it('rule 5: authentication endpoints are never refreshed or retried', async () => {
    const h = harness()
    await expect(h.authFetch('/auth/password/change', { method: 'POST' })).rejects.toMatchObject({ status: 401 })
    await expect(h.authFetch('/auth/refresh', { method: 'POST' })).rejects.toMatchObject({ status: 401 })
    expect(h.refreshCalls).not.toHaveBeenCalled()
    expect(h.sent).toHaveLength(2)
    expect(h.sent[0]!.authorization).toBe('Bearer expired')
  })

  it('rule 6: a failed refresh reports the failure and the caller gets the 401', async () => {
    const h = harness({}, { refreshResult: { token: null, status: 401, message: 'Invalid or expired refresh token' } })
    await expect(h.authFetch('/api/data')).rejects.toMatchObject({ status: 401 })
    expect(h.failures).toEqual([{ outcome: { token: null, status: 401, message: 'Invalid or expired refresh token' }, hadSession: true }])
    expect(h.sent).toHaveLength(1)
  })

  it('rule 6: without a token or a shown session the failure is not a lost session', async () => {
    const h = harness({}, { refreshResult: { token: null, status: 401 } })
    h.state.token = null
    await expect(h.authFetch('/api/data')).rejects.toMatchObject({ status: 401 })
    expect(h.failures).toEqual([{ outcome: { token: null, status: 401 }, hadSession: false }])
    const shown = harness({ hasSession: () => true }, { refreshResult: { token: null, status: 401 } })
    shown.state.token = null
    await expect(shown.authFetch('/api/data')).rejects.toMatchObject({ status: 401 })
    expect(shown.failures[0]!.hadSession).toBe(true)
  })

  it('rule 7: with automaticRefresh false no refresh and no retry, the bearer is still sent', async () => {
    const h = harness({ automaticRefresh: false })
    await expect(h.authFetch('/api/data')).rejects.toMatchObject({ status: 401 })
    expect(h.refreshCalls).not.toHaveBeenCalled()
    expect(h.sent.map(s => s.authorization)).toEqual(['Bearer expired'])
  })

  it('rule 9: network errors are not retried and other failures reach the caller', async () => {
    const h = harness()
    h.state.token = 'valid'
    await expect(h.authFetch('/network/down')).rejects.toBeInstanceOf(TypeError)
    await expect(h.authFetch('/boom')).rejects.toMatchObject({ status: 500 })
    expect(h.sent).toHaveLength(2)
    expect(h.refreshCalls).not.toHaveBeenCalled()
    expect(h.sent.every(s => s.options.retry === 0)).toBe(true)
  })

  it('keeps caller options and lets an explicit retry through', async () => {
    const h = harness()
    h.state.token = 'valid'
    await h.authFetch('/api/x', { method: 'POST', retry: 2, headers: { 'x-trace': '1' } })
    expect(h.sent[0]!.options).toMatchObject({ method: 'POST', retry: 2 })
    expect(new Headers(h.sent[0]!.options.headers).get('x-trace')).toBe('1')
  })
})

/** A 401 of the module's error body with `error` (an ofetch error). */
function refused(error: string) {
  return Object.assign(new FakeHttpError(401), { data: { statusCode: 401, error, message: error } })
}

describe('stale tokens (organizations): a role changed since the token was issued', () => {
  /** A server that refuses `stale` with 401 `session_stale` (and `still-stale` too), a refresh that answers `fresh`. */
  function staleHarness(refreshTo = 'fresh', isAuth: AuthFetchDeps['isAuthEndpoint'] = (request, baseURL) => isOrgAuthEndpoint(request, endpoints, baseURL)) {
    const h = harness({ isAuthEndpoint: isAuth }, { refreshResult: { token: refreshTo } })
    h.state.token = 'stale'
    const send = vi.fn(async (request: string | Request, options: AuthFetchOptions) => {
      const authorization = new Headers(options.headers).get('authorization')
      h.sent.push({ url: String(request), authorization, options })
      if (authorization !== 'Bearer fresh') throw refused('session_stale')
      return { ok: String(request) }
    })
    return { ...h, authFetch: createAuthFetchCore(send, h.deps) }
  }

  it('a 401 session_stale at the host\'s API or at the organizations\' routes refreshes once and retries: the caller sees no error', async () => {
    for (const url of ['/api/projects', '/auth/orgs', '/auth/orgs/org_x/members']) {
      const h = staleHarness()
      expect(await h.authFetch(url), url).toEqual({ ok: url })
      expect(h.refreshCalls, url).toHaveBeenCalledTimes(1)
      expect(h.sent.map(s => s.authorization), url).toEqual(['Bearer stale', 'Bearer fresh'])
    }
  })

  it('a second session_stale after the refresh is an error as usual (no second refresh)', async () => {
    const h = staleHarness('still-stale')
    await expect(h.authFetch('/auth/orgs/org_x')).rejects.toMatchObject({ status: 401, data: { error: 'session_stale' } })
    expect(h.refreshCalls).toHaveBeenCalledTimes(1)
    expect(h.sent).toHaveLength(2)
    expect(h.failures).toHaveLength(0)
  })

  it('without organizations their paths are authentication endpoints (never refreshed); the module\'s other endpoints stay so with them', async () => {
    const core = staleHarness('fresh', (request, baseURL) => isAuthEndpoint(request, endpoints, baseURL))
    await expect(core.authFetch('/auth/orgs')).rejects.toMatchObject({ status: 401 })
    expect(core.refreshCalls).not.toHaveBeenCalled()
    for (const path of ['/auth/refresh', '/auth/token', '/auth/password/change', '/auth/orgsx']) expect(isOrgAuthEndpoint(path, endpoints), path).toBe(true)
    for (const path of ['/auth/orgs', '/auth/orgs/active', '/base/auth/orgs/x', '/auth/sessions']) expect(isOrgAuthEndpoint(path.replace('/base', ''), endpoints, path.startsWith('/base') ? '/base/' : undefined), path).toBe(false)
  })
})

describe('permissions in the browser (organizations)', () => {
  const table = { owner: ['*'], admin: ['project:*', 'member:read'], member: ['project:read'] }
  const claims = (orgRole?: string) => ({ sub: 'u', ...(orgRole ? { org: 'org_x', orgRole } : {}) })

  it('can(): the role of the active organization in the token grants the permission', () => {
    expect(can(table, claims('admin'), 'project:write')).toBe(true)
    expect(can(table, claims('member'), 'project:write')).toBe(false)
    expect(can(table, claims('member'), 'project:read')).toBe(true)
    expect(can(table, claims('owner'), 'anything:at-all')).toBe(true)
    expect(can(table, claims(), 'project:read')).toBe(false)
    expect(can(table, null, 'project:read')).toBe(false)
    expect(can(undefined, claims('owner'), 'project:read')).toBe(false)
    expect(can(table, claims('unknown-role'), 'project:read')).toBe(false)
  })

  it('the page guard reads auth: { permission } and auth: { role } of the page meta', () => {
    expect(accessRuleOf({ auth: { permission: 'project:write' } })).toEqual({ permission: 'project:write' })
    for (const meta of [{ auth: true }, { auth: 'guest' }, {}, undefined, { auth: null }]) expect(accessRuleOf(meta)).toBeUndefined()
    expect(meets(table, claims('admin'), { permission: 'project:write' })).toBe(true)
    expect(meets(table, claims('member'), { permission: 'project:write' })).toBe(false)
    expect(meets(table, claims('member'), { role: ['admin', 'member'] })).toBe(true)
    expect(meets(table, claims('member'), { role: 'admin' })).toBe(false)
    expect(meets(table, claims(), { role: 'admin' })).toBe(false)
    expect(meets(undefined, claims('owner'), { role: 'owner' })).toBe(false)
    expect(permissionDenied()).toEqual({ statusCode: 403, statusMessage: 'Forbidden', message: 'You do not have the permission for this', data: { error: 'permission_denied' }, fatal: true })
    app.$i18n = { locale: { value: 'de-AT' } }
    expect(permissionDenied()).toMatchObject({ statusCode: 403, statusMessage: dePages.access_forbidden, message: dePages.access_permission_denied, data: { error: 'permission_denied' } })
    app.$i18n = undefined
  })
})

describe('helpers', () => {
  it('reads statuses of ofetch errors and sets no header without a token', () => {
    expect(statusOf(new FakeHttpError(401))).toBe(401)
    expect(statusOf({ statusCode: 403 })).toBe(403)
    expect(statusOf(new TypeError('fetch failed'))).toBeUndefined()
    expect(statusOf(null)).toBeUndefined()
    expect(withBearer({ headers: { a: 'b' } }, null)).toEqual({ retry: 0, headers: { a: 'b' } })
  })
})

describe('callback page registration', () => {
  it('finds an app page at the callback path, nested routes included', async () => {
    const { hasPageAt } = await import('../../src/build/client')
    expect(hasPageAt([{ path: '/auth/callback', file: 'a.vue' }], '/auth/callback')).toBe(true)
    expect(hasPageAt([{ path: '/auth', file: 'auth.vue', children: [{ path: 'callback', file: 'c.vue' }] }], '/auth/callback')).toBe(true)
    expect(hasPageAt([{ path: '/auth', file: 'auth.vue', children: [{ path: 'other', file: 'o.vue' }] }], '/auth/callback')).toBe(false)
    expect(hasPageAt([], '/auth/callback')).toBe(false)
  })

  it('tells the browser code at build time whether the client middleware is registered', async () => {
    const { clientOptionsModule } = await import('../../src/build/client')
    expect(clientOptionsModule(false)).toBe('export const clientMiddleware = false\n')
    expect(clientOptionsModule(true)).toBe('export const clientMiddleware = true\n')
  })

  it('lists the client code of the features a build has on, and nothing of those it has off', async () => {
    const { clientFeaturesModule, clientFeaturesTypes } = await import('../../src/build/features')
    expect(clientFeaturesModule({})).toBe('export const passkey = undefined\nexport const magicLink = undefined\nexport const organizations = undefined\n')
    expect(clientFeaturesModule({ passkey: '/m/runtime/passkey/app/passkey-client' })).toBe('export const passkey = () => import("/m/runtime/passkey/app/passkey-client")\nexport const magicLink = undefined\nexport const organizations = undefined\n')
    expect(clientFeaturesModule({ magicLink: '/m/runtime/magic-link/app/magic-link-client' })).toBe('export const passkey = undefined\nexport const magicLink = () => import("/m/runtime/magic-link/app/magic-link-client")\nexport const organizations = undefined\n')
    // Organizations answer at once (`can()`, the page guard): their module is in the core client's chunk.
    expect(clientFeaturesModule({ organizations: '/m/runtime/organizations/app/organization-access' })).toBe('export const passkey = undefined\nexport const magicLink = undefined\nexport * as organizations from "/m/runtime/organizations/app/organization-access"\n')
    const types = clientFeaturesTypes(path => `/m/${path.slice(2)}`)
    expect(types).toContain('export declare const passkey: (() => Promise<typeof import("/m/runtime/passkey/app/passkey-client")>) | undefined')
    expect(types).toContain('export declare const magicLink: (() => Promise<typeof import("/m/runtime/magic-link/app/magic-link-client")>) | undefined')
    expect(types).toContain('export declare const organizations: typeof import("/m/runtime/organizations/app/organization-access") | undefined')
  })

  it('types the auth page meta with the values of the route rules, plus \'guest\'', async () => {
    const { appTypeTemplate } = await import('../../src/build/type-template')
    const template = appTypeTemplate('/module/runtime/types/auth')
    expect(template).toContain('import type { AuthPageMeta } from "/module/runtime/types/auth"')
    expect(template).toContain('auth?: AuthPageMeta')
    expect(template).toContain('declare module \'#app\'')
    expectTypeOf<AuthPageMeta>().toEqualTypeOf<AuthRouteRule | 'guest'>()
    expectTypeOf<AuthRouteRule>().toEqualTypeOf<boolean | 'required' | 'protected' | 'public' | 'skip' | AuthAccessRule>()
    expectTypeOf<{ permission: 'project:write' }>().toExtend<AuthRouteRule>()
    expectTypeOf<{ role: ['admin', 'owner'] }>().toExtend<AuthPageMeta>()
    expectTypeOf<{ permission: 1 }>().not.toExtend<AuthRouteRule>()
    expectTypeOf<{ other: 'x' }>().not.toExtend<AuthRouteRule>()
  })
})

describe('shared helpers', () => {
  it('reads the access token of every token-issuing answer, accessToken first', () => {
    expect(accessTokenOf({ token: 't', expiresIn: 60, accessToken: 't', tokenType: 'Bearer' })).toBe('t')
    expect(accessTokenOf({ accessToken: 'new' })).toBe('new')
    expect(accessTokenOf({ token: 'old-shape' })).toBe('old-shape')
    expect(accessTokenOf({ token: 'a', accessToken: 'b' })).toBe('b')
    expect(accessTokenOf({ accessToken: '', token: 'fallback' })).toBe('fallback')
    for (const body of [null, undefined, 'token', 42, {}, { accessToken: 1 }, { token: '' }]) expect(accessTokenOf(body)).toBeNull()
  })

  it('matches path prefixes by whole segments', () => {
    expect(isPathUnder('/auth', '/auth')).toBe(true)
    expect(isPathUnder('/auth/google?x=1', '/auth/')).toBe(true)
    expect(isPathUnder('/authors', '/auth')).toBe(false)
    expect(isPathUnder('/api/x', '/')).toBe(true)
    expect(isPathUnder('/', '/auth')).toBe(false)
  })
})
