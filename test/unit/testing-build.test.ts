import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { Resolver } from '@nuxt/kit'
import type { Nuxt } from '@nuxt/schema'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { SetupContext } from '../../src/build/setup-context'
import { setupTesting, testLoginPlan, testLoginReason, TEST_LOGIN_ENV, TEST_LOGIN_TEMPLATE } from '../../src/build/testing'
import { hashTestLoginSecret, hasTestLoginSecret, isTestLoginRequest, TEST_LOGIN_FILE, TEST_LOGIN_PATH, TEST_LOGIN_SECRET_HEADER } from '../../src/runtime/server/lib/core/test-login'
import { browserCookies, CookieJar, parseSetCookie } from '../../src/testing/cookies'
import { findTestLoginFile } from '../../src/testing/secret-file'
import { fakeEvent } from './helpers/event'

const kit = vi.hoisted(() => ({ addServerHandler: vi.fn(), addServerTemplate: vi.fn(), addTemplate: vi.fn() }))
vi.mock('@nuxt/kit', () => kit)

function setupContext(test: boolean) {
  const warnings: string[] = []
  const ctx = {
    nuxt: { options: { test } } as unknown as Nuxt,
    options: {} as SetupContext['options'],
    resolver: { resolve: (path: string) => `/module${path.slice(1)}` } as unknown as Resolver,
    logger: { warn: (message: string) => warnings.push(message), info: () => {} },
    features: [],
    clientFeatures: {},
  } satisfies SetupContext
  return { ctx, warnings }
}

afterEach(() => vi.clearAllMocks())

/** The environment of a build under vitest (it sets these in its own process). */
const UNDER_VITEST = { NODE_ENV: 'test', TEST: 'true', VITEST: 'true' }

describe('which builds get the test-only login', () => {
  it('a build made for tests inside the test runner (nuxt.options.test and VITEST)', () => {
    expect(testLoginReason({ test: true, env: UNDER_VITEST })).toBe('test runner')
    expect(testLoginReason({ test: true, env: { NODE_ENV: 'production', VITEST: 'true' } })).toBe('test runner')
  })

  it('not an ordinary build that NODE_ENV=test or TEST=1 made "for tests" (nuxt.options.test without VITEST)', () => {
    expect(testLoginReason({ test: true, env: { NODE_ENV: 'test' } })).toBeNull()
    expect(testLoginReason({ test: true, env: { NODE_ENV: 'production', TEST: '1' } })).toBeNull()
    expect(testLoginReason({ test: true, env: { NODE_ENV: 'production', TEST: 'true', VITEST: '' } })).toBeNull()
  })

  it('not a build without nuxt.options.test, even in the test runner\'s environment', () => {
    expect(testLoginReason({ test: false, env: {} })).toBeNull()
    expect(testLoginReason({ test: false, env: { NODE_ENV: 'production' } })).toBeNull()
    expect(testLoginReason({ test: false, env: UNDER_VITEST })).toBeNull()
  })

  it(`any build with ${TEST_LOGIN_ENV}=true (a test app built before the tests run); =false switches it off`, () => {
    expect(testLoginReason({ test: false, env: { NODE_ENV: 'production', [TEST_LOGIN_ENV]: 'true' } })).toBe('opt-in')
    expect(testLoginReason({ test: true, env: { [TEST_LOGIN_ENV]: '1' } })).toBe('opt-in')
    expect(testLoginReason({ test: true, env: { ...UNDER_VITEST, [TEST_LOGIN_ENV]: 'false' } })).toBeNull()
    expect(testLoginReason({ test: true, env: { ...UNDER_VITEST, [TEST_LOGIN_ENV]: '0' } })).toBeNull()
    // Only an explicit yes: anything else is no opt-in.
    expect(testLoginReason({ test: false, env: { [TEST_LOGIN_ENV]: 'yes' } })).toBeNull()
    expect(testLoginReason({ test: false, env: { [TEST_LOGIN_ENV]: '' } })).toBeNull()
  })

  it('the warning says why the build has it', () => {
    expect(testLoginPlan({ test: true, env: UNDER_VITEST })!.warning).toMatch(/^Test build \(nuxt\.options\.test under vitest\)/)
    expect(testLoginPlan({ test: false, env: { [TEST_LOGIN_ENV]: 'true' } })!.warning).toMatch(new RegExp(`^Test build \\(${TEST_LOGIN_ENV}=true\\)`))
  })
})

describe('the test-only login in the build', () => {
  /** No route, no secret, no template, no warning. */
  function expectNothingAdded(warnings: string[]): void {
    expect(kit.addServerHandler).not.toHaveBeenCalled()
    expect(kit.addServerTemplate).not.toHaveBeenCalled()
    expect(kit.addTemplate).not.toHaveBeenCalled()
    expect(warnings).toEqual([])
  }

  it('is absent from a build not made for tests: no route, no secret, no template, no warning', () => {
    expect(testLoginPlan({ test: false, env: {} })).toBeNull()
    const { ctx, warnings } = setupContext(false)
    setupTesting(ctx, UNDER_VITEST)
    expectNothingAdded(warnings)
  })

  it('is absent from `NODE_ENV=test nuxi build` (nuxt.options.test, outside the test runner)', () => {
    const { ctx, warnings } = setupContext(true)
    setupTesting(ctx, { NODE_ENV: 'production', TEST: '1' })
    expectNothingAdded(warnings)
  })

  it('in a test build: the endpoint (a server middleware), the secret in the build directory only, its hash in the server bundle, a warning', () => {
    const { ctx, warnings } = setupContext(true)
    setupTesting(ctx, UNDER_VITEST)
    expect(kit.addServerHandler).toHaveBeenCalledExactlyOnceWith({ middleware: true, handler: '/module/runtime/server/middleware/test-login-endpoint' })
    const file = kit.addTemplate.mock.calls[0]![0] as { filename: string, write: boolean, getContents: () => string }
    expect(file).toMatchObject({ filename: TEST_LOGIN_FILE, write: true })
    const { path, secret } = JSON.parse(file.getContents()) as { path: string, secret: string }
    expect(path).toBe(TEST_LOGIN_PATH)
    expect(Buffer.from(secret, 'base64url')).toHaveLength(32)
    const server = kit.addServerTemplate.mock.calls[0]![0] as { filename: string, getContents: () => string }
    expect(server.filename).toBe(TEST_LOGIN_TEMPLATE)
    expect(server.getContents()).toBe(`export const secretHash = "${createHash('sha256').update(secret).digest('hex')}"\n`)
    expect(server.getContents()).not.toContain(secret)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/Never deploy a test build/)
  })

  it('makes a new secret for every build', () => {
    const build = { test: true, env: UNDER_VITEST }
    expect(testLoginPlan(build)!.secret).not.toBe(testLoginPlan(build)!.secret)
  })
})

describe('hasTestLoginSecret', () => {
  const secret = 'a'.repeat(43)
  const hash = hashTestLoginSecret(secret)
  const attempt = (headers: Record<string, string>, expected = hash) => hasTestLoginSecret(fakeEvent({ method: 'POST', url: TEST_LOGIN_PATH, headers }), expected)

  it('is true for the build\'s secret', () => {
    expect(attempt({ [TEST_LOGIN_SECRET_HEADER]: secret })).toBe(true)
  })

  it('is false without the secret, with another one, or when the build has no hash', () => {
    expect(attempt({})).toBe(false)
    expect(attempt({ [TEST_LOGIN_SECRET_HEADER]: `${secret}x` })).toBe(false)
    expect(attempt({ [TEST_LOGIN_SECRET_HEADER]: hash })).toBe(false)
    expect(attempt({ [TEST_LOGIN_SECRET_HEADER]: '' }, '')).toBe(false)
    expect(attempt({ [TEST_LOGIN_SECRET_HEADER]: secret }, '')).toBe(false)
    expect(attempt({ [TEST_LOGIN_SECRET_HEADER]: 'x'.repeat(10_000) })).toBe(false)
  })
})

describe('isTestLoginRequest', () => {
  it('is true for a POST to the endpoint\'s path only (any query string aside)', () => {
    const request = (method: string, url: string) => isTestLoginRequest(fakeEvent({ method, url }))
    expect(request('POST', TEST_LOGIN_PATH)).toBe(true)
    expect(request('POST', `${TEST_LOGIN_PATH}?x=1`)).toBe(true)
    expect(request('GET', TEST_LOGIN_PATH)).toBe(false)
    expect(request('PUT', TEST_LOGIN_PATH)).toBe(false)
    expect(request('POST', `${TEST_LOGIN_PATH}/more`)).toBe(false)
    expect(request('POST', `${TEST_LOGIN_PATH}x`)).toBe(false)
    expect(request('POST', '/auth/token')).toBe(false)
  })
})

describe('the cookie jar of the e2e helpers', () => {
  const now = Date.UTC(2026, 0, 1)

  it('reads the attributes of a Set-Cookie line', () => {
    expect(parseSetCookie('svc-refresh=abc; Max-Age=604800; Path=/; HttpOnly; Secure; SameSite=Strict', now)).toEqual({
      name: 'svc-refresh', value: 'abc', path: '/', secure: true, httpOnly: true, sameSite: 'Strict', expires: now / 1000 + 604800,
    })
    expect(parseSetCookie('flag=1', now)).toMatchObject({ path: '/', secure: false, httpOnly: false, sameSite: 'Lax', expires: -1 })
    expect(parseSetCookie('=nameless', now)).toBeNull()
  })

  it('keeps what responses set, drops what they expire, and sends cookies by path', () => {
    const jar = new CookieJar()
    const response = (...lines: string[]) => {
      const headers = new Headers()
      for (const line of lines) headers.append('set-cookie', line)
      return new Response(null, { headers })
    }
    jar.store(response('svc-refresh=r1; Path=/; HttpOnly', '__Host-svc-code=c1; Path=/; Secure', 'scoped=s; Path=/auth'), now)
    expect(jar.header('/')).toBe('svc-refresh=r1; __Host-svc-code=c1')
    expect(jar.header('/auth/refresh')).toBe('svc-refresh=r1; __Host-svc-code=c1; scoped=s')
    expect(jar.header('/authors')).toBe('svc-refresh=r1; __Host-svc-code=c1')
    jar.store(response('svc-refresh=r2; Path=/', '__Host-svc-code=; Max-Age=0; Path=/'), now)
    expect(jar.get('svc-refresh')).toBe('r2')
    expect(jar.list().map(c => c.name)).toEqual(['svc-refresh', 'scoped'])
  })

  it('hands cookies to the browser host-only, in the domain form: a __Host- cookie keeps Secure and Path=/ over http', () => {
    const jar = new CookieJar()
    const headers = new Headers()
    headers.append('set-cookie', '__Host-svc-code=c1; Max-Age=60; Path=/; HttpOnly; Secure; SameSite=Lax')
    headers.append('set-cookie', 'svc-refresh=r1; Path=/auth; HttpOnly; Secure; SameSite=Strict')
    headers.append('set-cookie', 'flag=1')
    jar.store(new Response(null, { headers }), now)
    const cookies = browserCookies(jar.list(now), 'http://127.0.0.1:3000/')
    expect(cookies).toEqual([
      { name: '__Host-svc-code', value: 'c1', domain: '127.0.0.1', path: '/', secure: true, httpOnly: true, sameSite: 'Lax', expires: now / 1000 + 60 },
      { name: 'svc-refresh', value: 'r1', domain: '127.0.0.1', path: '/auth', secure: true, httpOnly: true, sameSite: 'Strict', expires: -1 },
      { name: 'flag', value: '1', domain: '127.0.0.1', path: '/', secure: false, httpOnly: false, sameSite: 'Lax', expires: -1 },
    ])
    // Never Playwright's `url` form (it would take Secure from the scheme) nor a domain cookie.
    for (const cookie of cookies) {
      expect(cookie).not.toHaveProperty('url')
      expect(cookie.domain.startsWith('.')).toBe(false)
    }
    expect(browserCookies(jar.list(now), 'http://localhost:4000/base/')[0]).toMatchObject({ domain: 'localhost', path: '/' })
    expect(browserCookies(jar.list(now), 'http://[::1]:4000/')[0]).toMatchObject({ domain: '[::1]' })
  })
})

describe('finding the secret of a build made beforehand', () => {
  const write = (dir: string, secret: string, mtime: Date) => {
    const file = join(dir, TEST_LOGIN_FILE)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, JSON.stringify({ path: TEST_LOGIN_PATH, secret }))
    utimesSync(file, mtime, mtime)
    return file
  }

  it('looks in the production build directory (node_modules/.cache/nuxt/.nuxt) and takes the newest file over a stale .nuxt', () => {
    const root = mkdtempSync(join(tmpdir(), 'svc-test-login-'))
    try {
      const stale = write(join(root, '.nuxt'), 'from-prepare', new Date(Date.now() - 60_000))
      const production = write(join(root, 'node_modules/.cache/nuxt/.nuxt'), 'from-build', new Date())
      expect(findTestLoginFile({ rootDir: root })).toEqual({ found: production, looked: [production, stale] })
      // A dev server's build, newer than the production one, wins the same way.
      utimesSync(stale, new Date(Date.now() + 1_000), new Date(Date.now() + 1_000))
      expect(findTestLoginFile({ rootDir: root }).found).toBe(stale)
      // A named build directory, or the one the test context built, is the only place looked at.
      expect(findTestLoginFile({ rootDir: root, buildDir: join(root, 'elsewhere') })).toEqual({ found: undefined, looked: [join(root, 'elsewhere', TEST_LOGIN_FILE)] })
      expect(findTestLoginFile({ rootDir: root, contextBuildDir: join(root, 'node_modules/.cache/nuxt/.nuxt') }).found).toBe(production)
    }
    finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})
