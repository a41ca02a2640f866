import { createHash } from 'node:crypto'
import type { Resolver } from '@nuxt/kit'
import type { Nuxt } from '@nuxt/schema'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { SetupContext } from '../../src/build/setup-context'
import { setupTesting, testLoginPlan, TEST_LOGIN_TEMPLATE } from '../../src/build/testing'
import { authErrorCode } from '../../src/runtime/server/lib/errors'
import { hashTestLoginSecret, requireTestLoginSecret, TEST_LOGIN_FILE, TEST_LOGIN_PATH, TEST_LOGIN_SECRET_HEADER } from '../../src/runtime/server/lib/test-login'
import { CookieJar, parseSetCookie } from '../../src/testing/cookies'
import { unitContext } from './helpers/context'
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
  } satisfies SetupContext
  return { ctx, warnings }
}

afterEach(() => vi.clearAllMocks())

describe('the test-only login in the build', () => {
  it('is absent from a build not made for tests: no route, no secret, no template, no warning', () => {
    expect(testLoginPlan(false)).toBeNull()
    const { ctx, warnings } = setupContext(false)
    setupTesting(ctx)
    expect(kit.addServerHandler).not.toHaveBeenCalled()
    expect(kit.addServerTemplate).not.toHaveBeenCalled()
    expect(kit.addTemplate).not.toHaveBeenCalled()
    expect(warnings).toEqual([])
  })

  it('in a test build: the route, the secret in the build directory only, its hash in the server bundle, a warning', () => {
    const { ctx, warnings } = setupContext(true)
    setupTesting(ctx)
    expect(kit.addServerHandler).toHaveBeenCalledExactlyOnceWith({ route: TEST_LOGIN_PATH, method: 'post', handler: '/module/runtime/server/routes/testing/login.post' })
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
    expect(testLoginPlan(true)!.secret).not.toBe(testLoginPlan(true)!.secret)
  })
})

describe('requireTestLoginSecret', () => {
  const secret = 'a'.repeat(43)
  const hash = hashTestLoginSecret(secret)
  const attempt = async (headers: Record<string, string>, expected = hash) => {
    const ctx = await unitContext()
    try {
      requireTestLoginSecret(fakeEvent({ method: 'POST', url: TEST_LOGIN_PATH, headers }), ctx, expected)
      return 'passed'
    }
    catch (error) {
      return `${(error as { statusCode: number }).statusCode} ${authErrorCode(error)}`
    }
  }

  it('lets the build\'s secret through', async () => {
    expect(await attempt({ [TEST_LOGIN_SECRET_HEADER]: secret })).toBe('passed')
  })

  it('answers 404 not_found without the secret, with another one, or when the build has no hash', async () => {
    expect(await attempt({})).toBe('404 not_found')
    expect(await attempt({ [TEST_LOGIN_SECRET_HEADER]: `${secret}x` })).toBe('404 not_found')
    expect(await attempt({ [TEST_LOGIN_SECRET_HEADER]: hash })).toBe('404 not_found')
    expect(await attempt({ [TEST_LOGIN_SECRET_HEADER]: '' }, '')).toBe('404 not_found')
    expect(await attempt({ [TEST_LOGIN_SECRET_HEADER]: secret }, '')).toBe('404 not_found')
    expect(await attempt({ [TEST_LOGIN_SECRET_HEADER]: 'x'.repeat(10_000) })).toBe('404 not_found')
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
})
