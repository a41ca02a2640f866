import { beforeEach, describe, expect, it, vi } from 'vitest'
import { allowedRedirectUri, validateNativeOptions } from '../../src/runtime/native/server/native-options'
import { buildStepContext } from './helpers/build-steps'

// The native endpoints' build step and options: routes only when `native` is set, redirect URIs per RFC 8252.
const kit = vi.hoisted(() => ({ addServerHandler: vi.fn() }))
vi.mock('@nuxt/kit', () => kit)

const { setupNative } = await import('../../src/build/native')
const { moduleRoutePaths } = await import('../../src/build/module-routes')

beforeEach(() => {
  vi.clearAllMocks()
})

describe('the native build step', () => {
  it('off: no route, no path', () => {
    const ctx = buildStepContext({ providers: { mock: { mockUsers: [] } } })
    setupNative(ctx)
    expect(kit.addServerHandler).not.toHaveBeenCalled()
    expect(moduleRoutePaths(ctx.options).filter(path => path.includes('native'))).toEqual([])
  })

  it('on: the three grants and the login route under the auth path', () => {
    const ctx = buildStepContext({ native: { redirectUris: ['com.example.app:/cb'] }, endpoints: { authPath: '/api/auth' }, providers: { mock: { mockUsers: [] } } })
    setupNative(ctx)
    expect(kit.addServerHandler.mock.calls.map(([handler]) => handler)).toEqual([
      { route: '/api/auth/native/token', method: 'post', handler: '/module/runtime/native/server/routes/token.post' },
      { route: '/api/auth/native/refresh', method: 'post', handler: '/module/runtime/native/server/routes/refresh.post' },
      { route: '/api/auth/native/logout', method: 'post', handler: '/module/runtime/native/server/routes/logout.post' },
      { route: '/api/auth/native/login/:provider', method: 'get', handler: '/module/runtime/native/server/routes/login.get' },
    ])
  })

  it('refuses the build on a mistake in its options', () => {
    expect(() => setupNative(buildStepContext({ native: { redirectUris: ['http://app.example/cb'] } }))).toThrow(/svcAuth\.native\.redirectUris\[0\] may use http only on the loopback/)
    expect(() => setupNative(buildStepContext({ native: { redirectUris: [] } }))).toThrow(/at least one/)
    expect(() => setupNative(buildStepContext({ native: { redirectUris: ['com.example.app:/cb'] }, tokenRefresh: { enabled: false } }))).toThrow(/needs token refresh/)
    expect(kit.addServerHandler).not.toHaveBeenCalled()
  })
})

describe('native redirect URIs', () => {
  it('accept a private-use scheme, https and loopback IP literals; refuse the rest', () => {
    expect(validateNativeOptions({ native: { redirectUris: ['com.example.app:/cb', 'https://app.example.com/native', 'http://127.0.0.1/cb', 'http://[::1]:8080/cb'] } })).toEqual([])
    for (const uri of ['http://localhost/cb', 'http://app.example/cb', 'javascript:alert(1)', 'data:text/html,x', 'myapp:/cb', 'com.example.app:/cb#frag', 'https://user:pw@app.example/cb', 'not a uri', 'x'.repeat(600)]) {
      expect(validateNativeOptions({ native: { redirectUris: [uri] } }), uri).toHaveLength(1)
    }
  })

  it('match exactly, a loopback one on any port only', () => {
    const options = { native: { redirectUris: ['com.example.app:/cb', 'http://127.0.0.1/cb', 'https://app.example.com/native'] } }
    expect(allowedRedirectUri(options, 'com.example.app:/cb')).toBe('com.example.app:/cb')
    expect(allowedRedirectUri(options, 'http://127.0.0.1:50123/cb')).toBe('http://127.0.0.1:50123/cb')
    expect(allowedRedirectUri(options, 'http://127.0.0.1/cb')).toBe('http://127.0.0.1/cb')
    for (const uri of ['com.example.app:/cb/', 'COM.EXAMPLE.APP:/cb', 'https://app.example.com:8443/native', 'https://app.example.com/native/x', 'http://127.0.0.1:50123/cb?x=1', 'http://127.0.0.1:50123/CB', 'http://localhost:50123/cb', 'http://127.0.0.1:50123/cb#x', 'http://127.000.000.001:50123/cb']) {
      expect(allowedRedirectUri(options, uri), uri).toBeUndefined()
    }
    // Crafted variants: userinfo, a look-alike host, other IPv6 and IPv4 spellings, percent-encoding, dot
    // segments, a backslash, an empty port or query, whitespace and fragments.
    for (const uri of ['com.example.app://evil@/cb', 'com.example.app:%2Fcb', 'com.example.app:/cb%2F', ' com.example.app:/cb', 'com.example.app:/cb\n', 'http://evil@127.0.0.1:50123/cb', 'http://127.0.0.1.evil.com/cb', 'http://[::1]/cb', 'http://[0:0:0:0:0:0:0:1]/cb', 'http://[::ffff:127.0.0.1]/cb', 'http://127.1/cb', 'http://2130706433/cb', 'http://127.0.0.1:/cb', 'http://127.0.0.1:080/cb', 'http://127.0.0.1:50123/%63b', 'http://127.0.0.1:50123/x/../cb', 'http://127.0.0.1:50123//cb', 'http://127.0.0.1\\@evil.com/cb', 'http://127.0.0.1:50123/cb?', 'http://127.0.0.1:50123/cb#', 'HTTP://127.0.0.1:50123/cb']) {
      expect(allowedRedirectUri(options, uri), uri).toBeUndefined()
    }
    expect(allowedRedirectUri({}, 'com.example.app:/cb')).toBeUndefined()
  })
})
