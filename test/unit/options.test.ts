import { describe, expect, it } from 'vitest'
import { checkOptions } from '../../src/build/checks'
import { cookiePathMatches, refreshCookiePathErrors } from '../../src/runtime/server/lib/edge/cookie-path'
import { defaultOptions, providerNames, resolveOptions, toPublicConfig } from '../../src/build/resolve-options'
import { serverRoutes } from '../../src/build/module-routes'
import { typeTemplate } from '../../src/build/type-template'
import { createAuthContext } from '../../src/runtime/server/lib/core/context'
import { formatValidationErrors, validateOptions } from '../../src/runtime/server/lib/config/validate-options'
import { isRelativePath } from '../../src/runtime/shared/paths'
import type { Duration, ModuleOptions, ModuleOptionsInput } from '../../src/runtime/types/options'
import { features } from './helpers/features'

const SECRET = 'options-test-secret-0123456789-abcdefghij'

/** Valid resolved options (secret set), optionally adjusted by `edit`. */
function valid(edit?: (o: ModuleOptions) => void, input: ModuleOptionsInput = {}): ModuleOptions {
  const options = resolveOptions({ ...input, token: { secret: SECRET, ...input.token } }, true)
  edit?.(options)
  return options
}

/** The message of the error thrown by `fn` (fails the test when nothing is thrown). */
function thrownMessage(fn: () => unknown): string {
  try {
    fn()
  }
  catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
  throw new Error('expected a throw')
}

const PROD = { dev: false, env: {} }
const DEV = { dev: true, env: {} }

describe('resolveOptions', () => {
  it('applies every documented default', () => {
    const o = resolveOptions(undefined, true)
    expect(o.token).toEqual({
      secret: '',
      previousSecrets: [],
      expiresIn: 3600, // '1h', parsed
      algorithm: 'HS256',
      issuer: 'svc',
      audience: '',
      privateKey: '',
      keyId: 'svc-auth',
      previousKeys: [],
    })
    expect(o.tokenRefresh.enabled).toBe(true)
    expect(o.tokenRefresh.automaticRefresh).toBe(true)
    expect(o.tokenRefresh.ssrTokenExpiry).toBe(300)
    expect(o.tokenRefresh.reuseGracePeriod).toBe(10)
    expect(o.tokenRefresh.cookie).toEqual({
      cookieName: 'svc-refresh',
      maxAge: 604800,
      secure: true,
      httpOnly: true,
      sameSite: 'lax',
      path: '/',
    })
    expect(o.tokenRefresh.storage.driver).toBe('fs')
    expect(o.tokenRefresh.storage.prefix).toBe('refresh:')
    expect(o.tokenRefresh.storage.base).toBe('./.data/refresh-tokens')
    expect(o.tokenRefresh.storage.url).toBe('')
    expect(o.tokenRefresh.storage.password).toBe('')
    expect(o.tokenRefresh.encryption).toEqual({ enabled: false, key: '', previousKeys: [], algorithm: 'aes-256-gcm' })
    expect(o.authCode).toEqual({ expiresIn: 60, cookieName: 'svc-code' })
    expect(o.security).toEqual({ maxBodySize: 16384, allowedOrigins: [] })
    expect(o.publicUrl).toBe('')
    expect(o.redirect).toEqual({ logout: '/', success: '/', error: '/' })
    expect(o.clientMiddleware).toEqual({ enabled: false, global: false, redirectTo: '', loggedOutRedirectTo: '', publicRoutes: [] })
    expect(o.endpoints).toEqual({
      authPath: '/auth',
      loginPath: '/auth',
      callbackPath: '/auth/callback',
      logoutPath: '/auth/logout',
      refreshPath: '/auth/refresh',
      userInfoPath: '/api/user/me',
      tokenPath: '/auth/token',
      jwksPath: '/.well-known/jwks.json',
      impersonatePath: '/auth/impersonate',
      unimpersonatePath: '/auth/unimpersonate',
      sessionsPath: '/auth/sessions',
      secondFactorPath: '/auth/second-factor',
      magicLinkPath: '/auth/magic-link/open',
    })
    expect(o.sessions).toEqual({ revokeAccessTokens: true, recentLogin: 900 })
    expect(o.twoFactor).toEqual({ enabled: false, secret: '', previousSecrets: [], issuer: '', requireForAll: false, digits: 6, period: 30, algorithm: 'SHA1', window: 1, maxAttempts: 5, pendingLoginTTL: 300, enrolmentTTL: 600, recoveryCodes: 10, maxFailures: 20, failureWindow: 86400 })
    expect(o.logging).toEqual({ level: 'info', security: false })
    expect(o.impersonation).toEqual({ enabled: false, tokenExpiration: 900, originalUserLookupClaim: 'sub' })
    expect(o.enableSSR).toBe(true)
  })

  it('enableSSR follows the ssr flag unless set', () => {
    expect(resolveOptions(undefined, true).enableSSR).toBe(true)
    expect(resolveOptions(undefined, false).enableSSR).toBe(false)
    expect(resolveOptions({}, false).enableSSR).toBe(false)
    expect(resolveOptions({ enableSSR: false }, true).enableSSR).toBe(false)
    expect(resolveOptions({ enableSSR: true }, false).enableSSR).toBe(true)
  })

  it('user values override defaults and keep the siblings', () => {
    const o = resolveOptions({
      token: { secret: SECRET, expiresIn: '15m', issuer: 'acme' },
      tokenRefresh: { cookie: { cookieName: 'rt', sameSite: 'strict' }, storage: { driver: 'memory' }, reuseGracePeriod: 0 },
      endpoints: { refreshPath: '/api/refresh' },
      logging: { level: 'debug' },
      impersonation: { enabled: true },
    }, true)
    expect(o.token.secret).toBe(SECRET)
    expect(o.token.expiresIn).toBe('15m')
    expect(o.token.issuer).toBe('acme')
    expect(o.token.algorithm).toBe('HS256')
    expect(o.tokenRefresh.cookie.cookieName).toBe('rt')
    expect(o.tokenRefresh.cookie.sameSite).toBe('strict')
    expect(o.tokenRefresh.cookie.maxAge).toBe(604800)
    expect(o.tokenRefresh.storage.driver).toBe('memory')
    expect(o.tokenRefresh.storage.prefix).toBe('refresh:')
    expect(o.tokenRefresh.reuseGracePeriod).toBe(0)
    expect(o.endpoints.refreshPath).toBe('/api/refresh')
    expect(o.endpoints.logoutPath).toBe('/auth/logout')
    expect(o.logging).toEqual({ level: 'debug', security: false })
    expect(o.impersonation).toEqual({ enabled: true, tokenExpiration: 900, originalUserLookupClaim: 'sub' })
  })

  it('false and 0 given by the user win over true defaults', () => {
    const o = resolveOptions({ tokenRefresh: { enabled: false, automaticRefresh: false, cookie: { secure: false, httpOnly: false } } }, true)
    expect(o.tokenRefresh.enabled).toBe(false)
    expect(o.tokenRefresh.automaticRefresh).toBe(false)
    expect(o.tokenRefresh.cookie.secure).toBe(false)
    expect(o.tokenRefresh.cookie.httpOnly).toBe(false)
  })

  it('user arrays replace the default arrays and are copied', () => {
    const routes = ['/login', '/about/**']
    const o = resolveOptions({ clientMiddleware: { publicRoutes: routes } }, true)
    expect(o.clientMiddleware.publicRoutes).toEqual(['/login', '/about/**'])
    routes.push('/later')
    expect(o.clientMiddleware.publicRoutes).toEqual(['/login', '/about/**'])
    // Given twice, the array is not concatenated with itself or with earlier results.
    expect(resolveOptions({ clientMiddleware: { publicRoutes: ['/x'] } }, true).clientMiddleware.publicRoutes).toEqual(['/x'])
  })

  it('resolved options share no object with the defaults or with each other', () => {
    const a = resolveOptions(undefined, true)
    a.tokenRefresh.cookie.maxAge = 1
    a.tokenRefresh.encryption.enabled = true
    a.clientMiddleware.publicRoutes.push('/leak')
    a.endpoints.tokenPath = '/changed'
    const b = resolveOptions({ token: { secret: SECRET } }, true)
    expect(b.tokenRefresh.cookie.maxAge).toBe(604800)
    expect(b.tokenRefresh.encryption.enabled).toBe(false)
    expect(b.clientMiddleware.publicRoutes).toEqual([])
    expect(b.endpoints.tokenPath).toBe('/auth/token')
    expect(defaultOptions.tokenRefresh.cookie.maxAge).toBe(604800)
    expect(defaultOptions.clientMiddleware.publicRoutes).toEqual([])
  })
})

describe('toPublicConfig', () => {
  const secrets = {
    secret: 'SECRET-token-secret-4f1c9e7a-0123456789',
    privateKey: '-----BEGIN PRIVATE KEY-----\nPRIVATEKEY-9d2b7c41\n-----END PRIVATE KEY-----',
    encryptionKey: 'ENCRYPTIONKEY-7e3a5b9c-0123456789abcdef',
    storagePassword: 'STORAGEPASSWORD-2c8d6f1e',
    storageUrl: 'redis://admin:STORAGEURLPASS-5a9e3d7b@db.internal:6380/3',
  }

  it('contains none of the secrets', () => {
    const options = resolveOptions({
      token: { secret: secrets.secret, privateKey: secrets.privateKey, algorithm: 'RS256' },
      tokenRefresh: {
        encryption: { enabled: true, key: secrets.encryptionKey },
        storage: { driver: 'redis', password: secrets.storagePassword, url: secrets.storageUrl },
      },
    }, true)
    const serialised = JSON.stringify(toPublicConfig(options))
    for (const value of Object.values(secrets)) expect(serialised).not.toContain(value)
    for (const fragment of ['SECRET-token', 'PRIVATEKEY', 'ENCRYPTIONKEY', 'STORAGEPASSWORD', 'STORAGEURLPASS', 'db.internal']) {
      expect(serialised).not.toContain(fragment)
    }
    // Sanity: the full options do contain them.
    const full = JSON.stringify(options)
    for (const value of Object.values(secrets)) expect(full).toContain(JSON.stringify(value).slice(1, -1))
  })

  it('holds exactly the browser-facing settings', () => {
    const options = resolveOptions({ clientMiddleware: { enabled: true, redirectTo: '/login', loggedOutRedirectTo: '/', publicRoutes: ['/a'] } }, false)
    const pub = toPublicConfig(options)
    expect(Object.keys(pub).sort()).toEqual(['clientMiddleware', 'enableSSR', 'endpoints', 'providers', 'redirect', 'tokenRefresh'])
    expect(pub.tokenRefresh).toEqual({ enabled: true, automaticRefresh: true })
    expect(pub.endpoints).toEqual(options.endpoints)
    expect(pub.redirect).toEqual(options.redirect)
    expect(pub.clientMiddleware).toEqual(options.clientMiddleware)
    expect(pub.enableSSR).toBe(false)
    pub.clientMiddleware.publicRoutes.push('/b')
    expect(options.clientMiddleware.publicRoutes).toEqual(['/a'])
  })
})

describe('isRelativePath', () => {
  it.each([
    '/',
    '/dashboard',
    '/dashboard?tab=1',
    '/a/b#section',
    '/a//b',
    '/caf%C3%A9',
    '/search?q=%2F%2Fnot-at-start',
  ])('accepts %j', (value) => {
    expect(isRelativePath(value)).toBe(true)
  })

  it.each([
    '',
    'relative',
    'dashboard/x',
    'https://evil.example',
    'javascript:alert(1)',
    '//evil.example',
    '/\\evil.example',
    '\\\\evil.example',
    '/%2F%2Fevil.example',
    '/%2fevil.example',
    '/%5Cevil.example',
    '/%5cevil.example',
    '/a\nb',
    '/a\u0000',
    '/a\u007F',
    '/%0d%0aSet-Cookie:x=1',
    '/%E0%A4%A',
  ])('rejects %j', (value) => {
    expect(isRelativePath(value)).toBe(false)
  })

  it('rejects non-strings', () => {
    for (const value of [undefined, null, 42, ['/'], { path: '/' }, new String('/')]) expect(isRelativePath(value)).toBe(false)
  })
})

describe('validateOptions and checkOptions', () => {
  it('valid options pass without errors', () => {
    expect(validateOptions(valid()).errors).toEqual([])
    expect(checkOptions(valid(), DEV)).toEqual([])
    expect(checkOptions(valid(), PROD)).toEqual([])
  })

  it('a missing secret is an error in dev', () => {
    const options = resolveOptions(undefined, true)
    const message = thrownMessage(() => checkOptions(options, DEV))
    expect(message).toContain('[svc-auth] Invalid configuration')
    expect(message).toContain('svcAuth.token.secret is required')
    expect(validateOptions(options).errors).toEqual(['svcAuth.token.secret is required: set it in nuxt.config or with NUXT_SVC_AUTH_TOKEN_SECRET.'])
  })

  it('a missing secret is only a warning in a production build', () => {
    const warnings = checkOptions(resolveOptions(undefined, true), PROD)
    expect(warnings.some(w => w.includes('svcAuth.token.secret is not set') && w.includes('NUXT_SVC_AUTH_TOKEN_SECRET'))).toBe(true)
  })

  it('a missing secret is not even a warning when NUXT_SVC_AUTH_TOKEN_SECRET is set', () => {
    const env = { NUXT_SVC_AUTH_TOKEN_SECRET: SECRET }
    expect(checkOptions(resolveOptions(undefined, true), { dev: false, env })).toEqual([])
    expect(checkOptions(resolveOptions(undefined, true), { dev: true, env })).toEqual([])
  })

  it('an empty NUXT_SVC_AUTH_TOKEN_SECRET does not count as set', () => {
    expect(() => checkOptions(resolveOptions(undefined, true), { dev: true, env: { NUXT_SVC_AUTH_TOKEN_SECRET: '' } })).toThrow(/token\.secret is required/)
  })

  it('an HS256 secret under 32 bytes is an error', () => {
    const short = valid(o => (o.token.secret = 'x'.repeat(31)))
    expect(() => checkOptions(short, PROD)).toThrow(/svcAuth\.token\.secret must be at least 32 bytes long/)
    expect(validateOptions(valid(o => (o.token.secret = 'x'.repeat(32)))).errors).toEqual([])
    // Counted in UTF-8 bytes: 11 three-byte characters are 33 bytes.
    expect(validateOptions(valid(o => (o.token.secret = '東'.repeat(11)))).errors).toEqual([])
  })

  it('previous keys: lists of 32-byte secrets and encryption keys, RS256 keys as { keyId?, key }', () => {
    expect(validateOptions(valid(o => (o.token.previousSecrets = ['p'.repeat(32)]))).errors).toEqual([])
    expect(validateOptions(valid(o => (o.token.previousSecrets = ['short']))).errors.join('\n')).toMatch(/token\.previousSecrets\[0\] must be at least 32 bytes/)
    expect(validateOptions(valid(o => (o.tokenRefresh.encryption.previousKeys = ['k'.repeat(31)]))).errors.join('\n')).toMatch(/encryption\.previousKeys\[0\] must be at least 32 characters/)
    expect(validateOptions(valid(o => (o.token.previousKeys = [{ keyId: 'a', key: 'PEM' }]))).errors).toEqual([])
    expect(validateOptions(valid(o => ((o.token as unknown as { previousKeys: unknown }).previousKeys = ['PEM']))).errors.join('\n')).toMatch(/token\.previousKeys must be an array of \{ keyId\?: string, key: string \(PEM\) \}/)
  })

  it('redis topology: sentinels or cluster, not both; nodes as { host, port }; db 0 with a cluster', () => {
    const nodes = [{ host: '127.0.0.1', port: 7000 }]
    expect(validateOptions(valid(o => (o.tokenRefresh.storage.cluster = nodes))).errors).toEqual([])
    expect(validateOptions(valid(o => (o.tokenRefresh.storage.sentinels = nodes))).errors).toEqual([])
    expect(validateOptions(valid((o) => {
      o.tokenRefresh.storage.cluster = nodes
      o.tokenRefresh.storage.sentinels = nodes
    })).errors.join('\n')).toMatch(/either sentinels .* or cluster .*, not both/)
    expect(validateOptions(valid((o) => {
      o.tokenRefresh.storage.cluster = nodes
      o.tokenRefresh.storage.db = 2
    })).errors.join('\n')).toMatch(/db must be 0 with a Redis Cluster/)
    expect(validateOptions(valid(o => ((o.tokenRefresh.storage as unknown as { cluster: unknown }).cluster = ['127.0.0.1:7000']))).errors.join('\n')).toMatch(/storage\.cluster must be an array of \{ host, port \}/)
    expect(validateOptions(valid(o => ((o.tokenRefresh.storage as unknown as { tls: unknown }).tls = 'yes'))).errors.join('\n')).toMatch(/storage\.tls must be true or false/)
  })

  it('an encryption key under 32 characters is an error when encryption is on', () => {
    const options = valid(o => (o.tokenRefresh.encryption = { enabled: true, previousKeys: [], key: 'k'.repeat(31), algorithm: 'aes-256-gcm' }))
    expect(() => checkOptions(options, PROD)).toThrow(/svcAuth\.tokenRefresh\.encryption\.key must be at least 32 characters long/)
    const missing = valid(o => (o.tokenRefresh.encryption.enabled = true))
    expect(() => checkOptions(missing, PROD)).toThrow(/encryption\.key must be at least 32 characters/)
    expect(validateOptions(valid(o => (o.tokenRefresh.encryption = { enabled: true, previousKeys: [], key: 'k'.repeat(32), algorithm: 'aes-256-gcm' }))).errors).toEqual([])
    // A short key is fine while encryption is off.
    expect(validateOptions(valid(o => (o.tokenRefresh.encryption.key = 'short'))).errors).toEqual([])
  })

  describe.each(['logout', 'success', 'error'] as const)('redirect.%s', (key) => {
    it.each(['https://evil.example', '//evil.example', '/\\evil.example', '/%2F%2Fevil.example', 'relative', ''])('rejects %j', (target) => {
      const options = valid(o => (o.redirect[key] = target))
      const message = thrownMessage(() => checkOptions(options, PROD))
      expect(message).toContain(`svcAuth.redirect.${key} must be a relative path such as '/' (got ${JSON.stringify(target)}).`)
    })

    it('accepts a relative path', () => {
      expect(validateOptions(valid(o => (o.redirect[key] = '/dashboard?tab=1'))).errors).toEqual([])
    })
  })

  it('an unknown storage driver is an error', () => {
    const options = valid((o) => {
      const storage: { driver: string } = o.tokenRefresh.storage
      storage.driver = 'mongodb'
    })
    expect(() => checkOptions(options, PROD)).toThrow('svcAuth.tokenRefresh.storage.driver must be one of fs, redis, memory, upstash (got "mongodb").')
  })

  it('sameSite none without secure is an error', () => {
    const options = valid((o) => {
      o.tokenRefresh.cookie.sameSite = 'none'
      o.tokenRefresh.cookie.secure = false
    })
    expect(() => checkOptions(options, PROD)).toThrow(/sameSite 'none' requires secure: true/)
    expect(validateOptions(valid(o => (o.tokenRefresh.cookie.sameSite = 'none'))).errors).toEqual([])
  })

  it('an unknown sameSite value is an error', () => {
    const options = valid((o) => {
      const cookie: { sameSite: string } = o.tokenRefresh.cookie
      cookie.sameSite = 'relaxed'
    })
    expect(() => checkOptions(options, PROD)).toThrow(/cookie\.sameSite must be 'lax', 'strict' or 'none'/)
  })

  it.each<[string, Duration]>([
    ['soon', 'soon'],
    ['an unknown unit', '5 fortnights'],
    ['zero', 0],
    ['a negative number', -5],
    ['an empty string', ''],
  ])('token.expiresIn as %s is an error', (_label, value) => {
    const options = valid(o => (o.token.expiresIn = value))
    expect(() => checkOptions(options, PROD)).toThrow(`svcAuth.token.expiresIn must be a number of seconds or a duration such as '1h' (got ${JSON.stringify(value)}).`)
  })

  it('a bad ssrTokenExpiry is an error', () => {
    const options = valid(o => (o.tokenRefresh.ssrTokenExpiry = '-1m'))
    expect(() => checkOptions(options, PROD)).toThrow(/svcAuth\.tokenRefresh\.ssrTokenExpiry must be a number of seconds or a duration/)
  })

  it('good durations pass', () => {
    for (const value of ['90s', '5m', '1h', '7d', 3600]) {
      expect(validateOptions(valid((o) => {
        o.token.expiresIn = value
        o.tokenRefresh.ssrTokenExpiry = value
      })).errors).toEqual([])
    }
  })

  it('RS256 without a privateKey is an error', () => {
    const options = valid(o => (o.token.algorithm = 'RS256'))
    expect(() => checkOptions(options, PROD)).toThrow(/svcAuth\.token\.privateKey \(PKCS#8 PEM\) is required with algorithm RS256/)
  })

  it('an unknown algorithm is an error', () => {
    const options = valid((o) => {
      const token: { algorithm: string } = o.token
      token.algorithm = 'none'
    })
    expect(() => checkOptions(options, PROD)).toThrow(/svcAuth\.token\.algorithm must be 'HS256' or 'RS256' \(got "none"\)/)
  })

  it.each(Object.keys(defaultOptions.endpoints) as Array<keyof ModuleOptions['endpoints']>)('endpoints.%s not starting with / is an error', (key) => {
    const options = valid(o => (o.endpoints[key] = 'auth/somewhere'))
    expect(() => checkOptions(options, PROD)).toThrow(`svcAuth.endpoints.${key} must be a path starting with '/' (got "auth/somewhere").`)
  })

  it('an endpoint with a protocol-relative path is an error', () => {
    const options = valid(o => (o.endpoints.tokenPath = '//evil.example/token'))
    expect(() => checkOptions(options, PROD)).toThrow(/svcAuth\.endpoints\.tokenPath must be a path starting with '\/'/)
  })

  it('the client middleware enabled without redirectTo is an error', () => {
    const options = valid((o) => {
      o.clientMiddleware.enabled = true
      o.clientMiddleware.loggedOutRedirectTo = '/'
    })
    const message = thrownMessage(() => checkOptions(options, PROD))
    expect(message).toContain('svcAuth.clientMiddleware.redirectTo is required and must be a relative path when the client middleware is enabled.')
    expect(message).not.toContain('loggedOutRedirectTo')
  })

  it('the client middleware needs relative redirect targets', () => {
    const options = valid((o) => {
      o.clientMiddleware.enabled = true
      o.clientMiddleware.redirectTo = 'https://evil.example/login'
      o.clientMiddleware.loggedOutRedirectTo = ''
    })
    const message = thrownMessage(() => checkOptions(options, PROD))
    expect(message).toContain('svcAuth.clientMiddleware.redirectTo is required')
    expect(message).toContain('svcAuth.clientMiddleware.loggedOutRedirectTo is required')
    expect(validateOptions(valid((o) => {
      o.clientMiddleware.enabled = true
      o.clientMiddleware.redirectTo = '/login'
      o.clientMiddleware.loggedOutRedirectTo = '/'
    })).errors).toEqual([])
  })

  it('non-positive numbers are errors', () => {
    const options = valid((o) => {
      o.tokenRefresh.cookie.maxAge = 0
      o.authCode.expiresIn = -1
      o.impersonation.tokenExpiration = Number.NaN
      o.tokenRefresh.reuseGracePeriod = -1
    })
    const message = thrownMessage(() => checkOptions(options, PROD))
    expect(message).toContain('svcAuth.tokenRefresh.cookie.maxAge must be a number of seconds or a duration such as \'1h\' (got 0).')
    expect(message).toContain('svcAuth.authCode.expiresIn must be a number of seconds or a duration such as \'1h\' (got -1).')
    expect(message).toContain('svcAuth.impersonation.tokenExpiration must be a number of seconds or a duration such as \'1h\' (got null).')
    expect(message).toContain('svcAuth.tokenRefresh.reuseGracePeriod must be a number of seconds, 0 or more, or a duration such as \'1h\' (got -1).')
  })

  it('security options, the public URL and the code cookie name are checked', () => {
    const options = valid((o) => {
      o.security.maxBodySize = 100
      o.security.allowedOrigins = ['https://admin.example.com', 'https://x.example/path', 'admin.example.com', 'ftp://files.example']
      o.publicUrl = 'app.example.com'
      o.authCode.cookieName = 'bad name;'
    })
    const message = thrownMessage(() => checkOptions(options, PROD))
    expect(message).toContain('svcAuth.security.maxBodySize must be a whole number of bytes, 1024 or more (got 100).')
    expect(message).not.toContain('"https://admin.example.com"')
    expect(message).toContain('svcAuth.security.allowedOrigins[1] is not an origin (scheme://host[:port], no path) (got "https://x.example/path")')
    expect(message).toContain('svcAuth.security.allowedOrigins[2] is not an origin (scheme://host[:port], no path) (got "admin.example.com")')
    expect(message).toContain('svcAuth.security.allowedOrigins[3] is not an origin (scheme://host[:port], no path) (got "ftp://files.example")')
    expect(message).toContain('svcAuth.publicUrl must be an http(s) URL')
    expect(message).toContain('svcAuth.authCode.cookieName must be a cookie name')
    expect(validateOptions(valid((o) => {
      o.security.allowedOrigins = ['https://admin.example.com', 'http://localhost:3001/']
      o.publicUrl = 'https://app.example.com'
    })).errors).toEqual([])
  })

  it('an unknown log level is an error', () => {
    const options = valid((o) => {
      const logging: { level: string } = o.logging
      logging.level = 'verbose'
    })
    expect(() => checkOptions(options, PROD)).toThrow(/svcAuth\.logging\.level must be one of silent, error, warn, info, debug/)
  })

  it('several mistakes are all listed in one error, one per line', () => {
    const options = resolveOptions({
      token: { secret: 'short', algorithm: 'RS256', expiresIn: 'soon' },
      tokenRefresh: { cookie: { sameSite: 'none', secure: false }, encryption: { enabled: true, previousKeys: [], key: 'tiny' } },
      redirect: { success: '//evil.example' },
      endpoints: { refreshPath: 'auth/refresh' },
      clientMiddleware: { enabled: true, loggedOutRedirectTo: '/' },
    }, true)
    const message = thrownMessage(() => checkOptions(options, DEV))
    const expected = [
      'svcAuth.token.secret must be at least 32 bytes long.',
      'svcAuth.token.privateKey (PKCS#8 PEM) is required with algorithm RS256.',
      'svcAuth.token.expiresIn must be a number of seconds',
      'svcAuth.tokenRefresh.encryption.key must be at least 32 characters long',
      'svcAuth.tokenRefresh.cookie.sameSite \'none\' requires secure: true',
      'svcAuth.redirect.success must be a relative path',
      'svcAuth.endpoints.refreshPath must be a path starting with \'/\'',
      'svcAuth.clientMiddleware.redirectTo is required',
    ]
    for (const fragment of expected) expect(message).toContain(fragment)
    const lines = message.split('\n')
    expect(lines[0]).toBe('[svc-auth] Invalid configuration:')
    expect(lines.slice(1)).toHaveLength(expected.length)
    for (const line of lines.slice(1)) expect(line.startsWith('  - svcAuth.')).toBe(true)
  })

  it('formatValidationErrors lists each error on its own line', () => {
    expect(formatValidationErrors(['a', 'b'])).toBe('[svc-auth] Invalid configuration:\n  - a\n  - b')
  })

  it('warns about an insecure cookie and the memory driver', () => {
    const { errors, warnings } = validateOptions(valid((o) => {
      o.tokenRefresh.cookie.secure = false
      o.tokenRefresh.storage.driver = 'memory'
    }))
    expect(errors).toEqual([])
    expect(warnings.some(w => w.includes('cookie.secure is false'))).toBe(true)
    expect(warnings.some(w => w.includes('driver is \'memory\''))).toBe(true)
  })
})

describe('refresh cookie path (start-up check)', () => {
  const withPath = (path: string, edit?: (o: ModuleOptions) => void) => valid((o) => {
    o.tokenRefresh.cookie.path = path
    edit?.(o)
  })

  it('path-matches as RFC 6265 §5.1.4 says', () => {
    const cases: Array<[cookiePath: string, requestPath: string, sent: boolean]> = [
      ['/', '/auth/refresh', true],
      ['/auth', '/auth', true], // equal
      ['/auth', '/auth/refresh', true], // followed by '/'
      ['/auth/', '/auth/refresh', true], // ends with '/'
      ['/auth', '/authors', false], // not at a segment boundary
      ['/auth/', '/auth', false],
      ['/auth/refresh', '/auth', false],
      ['/Auth', '/auth/refresh', false], // case-sensitive
    ]
    for (const [cookiePath, requestPath, sent] of cases) expect(cookiePathMatches(cookiePath, requestPath), `${cookiePath} ${requestPath}`).toBe(sent)
  })

  it('accepts the default path, and a narrower one without SSR when it covers every endpoint', () => {
    expect(refreshCookiePathErrors(valid())).toEqual([])
    expect(checkOptions(valid(), PROD)).toEqual([])
    expect(refreshCookiePathErrors(withPath('/auth', o => (o.enableSSR = false)))).toEqual([])
    expect(refreshCookiePathErrors(withPath('/auth/', o => (o.enableSSR = false)))).toEqual([])
  })

  it('refuses a path that leaves out the refresh, token or logout endpoint, naming the option and them', () => {
    const options = withPath('/auth/refresh', o => (o.enableSSR = false))
    const message = thrownMessage(() => checkOptions(options, PROD))
    expect(message).toContain('[svc-auth] Invalid configuration')
    expect(message).toContain('svcAuth.tokenRefresh.cookie.path \'/auth/refresh\' does not cover \'/auth/token\', \'/auth/logout\'')
    expect(message).not.toContain('pages')
    // Whole segments only: `/au` is not a parent of `/auth/...`.
    expect(refreshCookiePathErrors(withPath('/au', o => (o.enableSSR = false)))[0]).toContain('\'/auth/token\', \'/auth/refresh\', \'/auth/logout\'')
    // Moved endpoints count where they are.
    const moved = withPath('/auth', (o) => {
      o.enableSSR = false
      o.endpoints.logoutPath = '/session/logout'
    })
    expect(refreshCookiePathErrors(moved)).toEqual([expect.stringContaining('does not cover \'/session/logout\':')])
  })

  it('does not apply without token refresh (there is no refresh cookie)', () => {
    expect(refreshCookiePathErrors(withPath('/auth', o => (o.tokenRefresh.enabled = false)))).toEqual([])
  })

  it('is checked again when the server starts, against the runtime base URL (a path set from the environment)', async () => {
    const options = withPath('/auth', (o) => {
      o.enableSSR = false
      o.tokenRefresh.storage.driver = 'memory'
    })
    await expect(createAuthContext(options, { baseURL: '/app/', features })).rejects.toThrow(/tokenRefresh\.cookie\.path '\/auth' does not cover '\/app\/auth\/token'/)
    const ctx = await createAuthContext(options, { baseURL: '/', features })
    await ctx.dispose()
  })

  it('with enableSSR needs the pages too: the app\'s base URL', () => {
    const [error] = refreshCookiePathErrors(withPath('/auth'))
    expect(error).toContain('does not cover \'/\':')
    expect(error).toContain('enableSSR')
    expect(() => checkOptions(withPath('/auth'), DEV)).toThrow(/tokenRefresh\.cookie\.path '\/auth' does not cover '\/'/)
    // Under a base URL every endpoint and page is under it; the cookie may be scoped to it.
    expect(refreshCookiePathErrors(withPath('/app'), '/app/')).toEqual([])
    expect(refreshCookiePathErrors(withPath('/app/'), '/app/')).toEqual([])
    expect(checkOptions(withPath('/app'), { ...PROD, baseURL: '/app/' })).toEqual([])
    expect(refreshCookiePathErrors(withPath('/app/auth'), '/app/')).toEqual([expect.stringContaining('does not cover \'/app/\':')])
    expect(refreshCookiePathErrors(withPath('/'), '/app/')).toEqual([])
    expect(refreshCookiePathErrors(withPath('/other'), '/app/')[0]).toContain('\'/app/auth/token\', \'/app/auth/refresh\', \'/app/auth/logout\', \'/app/\'')
  })

  it('with impersonation on needs the impersonation endpoints (ending one reads the cookie)', () => {
    const options = withPath('/auth/session', (o) => {
      o.enableSSR = false
      o.impersonation.enabled = true
      o.endpoints = { ...o.endpoints, tokenPath: '/auth/session/token', refreshPath: '/auth/session/refresh', logoutPath: '/auth/session/logout' }
    })
    expect(refreshCookiePathErrors(options)).toEqual([expect.stringContaining('does not cover \'/auth/impersonate\', \'/auth/unimpersonate\':')])
    options.impersonation.enabled = false
    expect(refreshCookiePathErrors(options)).toEqual([])
  })

  it('refuses a path that is not absolute', () => {
    expect(refreshCookiePathErrors(withPath('auth'))).toEqual(['svcAuth.tokenRefresh.cookie.path must be an absolute path such as \'/\' (got "auth").'])
    expect(refreshCookiePathErrors(withPath(''))[0]).toContain('must be an absolute path')
    expect(refreshCookiePathErrors(withPath('/; Domain=evil.test'))[0]).toContain('must be an absolute path')
  })
})

describe('serverRoutes', () => {
  it('registers the endpoints at their default paths', () => {
    expect(serverRoutes(resolveOptions(undefined, true))).toEqual([
      { route: '/auth/token', method: 'post', handler: 'server/routes/token.post' },
      { route: '/auth/refresh', method: 'post', handler: 'server/routes/refresh.post' },
      { route: '/auth/logout', method: 'post', handler: 'server/routes/logout.post' },
      { route: '/api/user/me', method: 'get', handler: 'server/routes/me.get' },
      { route: '/.well-known/jwks.json', method: 'get', handler: 'server/routes/jwks.get' },
      { route: '/auth/impersonate', method: 'post', handler: 'impersonation/server/routes/impersonate.post' },
      { route: '/auth/unimpersonate', method: 'post', handler: 'impersonation/server/routes/unimpersonate.post' },
      { route: '/auth/sessions', method: 'get', handler: 'server/routes/sessions/list.get' },
      { route: '/auth/sessions/revoke-others', method: 'post', handler: 'server/routes/sessions/revoke-others.post' },
      { route: '/auth/sessions/:id', method: 'delete', handler: 'server/routes/sessions/revoke.delete' },
    ])
  })

  it('uses the configured paths', () => {
    const routes = serverRoutes(resolveOptions({
      endpoints: { tokenPath: '/api/session/token', refreshPath: '/api/session/refresh', logoutPath: '/api/session/logout', userInfoPath: '/api/me', jwksPath: '/keys.json', impersonatePath: '/api/admin/as', unimpersonatePath: '/api/admin/back', sessionsPath: '/api/me/sessions/' },
    }, true))
    expect(Object.fromEntries(routes.map(r => [r.handler.replace(/^.*routes\//, ''), `${r.method} ${r.route}`]))).toEqual({
      'token.post': 'post /api/session/token',
      'refresh.post': 'post /api/session/refresh',
      'logout.post': 'post /api/session/logout',
      'me.get': 'get /api/me',
      'jwks.get': 'get /keys.json',
      'impersonate.post': 'post /api/admin/as',
      'unimpersonate.post': 'post /api/admin/back',
      'sessions/list.get': 'get /api/me/sessions/',
      'sessions/revoke-others.post': 'post /api/me/sessions/revoke-others',
      'sessions/revoke.delete': 'delete /api/me/sessions/:id',
    })
  })

  it('throws when two endpoints share a method and path', () => {
    const options = resolveOptions({ endpoints: { refreshPath: '/auth/token' } }, true)
    expect(() => serverRoutes(options)).toThrow('[svc-auth] svcAuth.endpoints: refresh.post and token.post share POST /AUTH/TOKEN')
    const gets = resolveOptions({ endpoints: { jwksPath: '/api/user/me' } }, true)
    expect(() => serverRoutes(gets)).toThrow(/jwks\.get and me\.get share GET/)
  })

  it('allows one path for two different methods', () => {
    const options = resolveOptions({ endpoints: { userInfoPath: '/auth/token' } }, true)
    expect(serverRoutes(options).filter(r => r.route === '/auth/token').map(r => r.method).sort()).toEqual(['get', 'post'])
  })
})

describe('typeTemplate', () => {
  const output = typeTemplate('/abs/path/runtime/types/auth')

  it('imports the module types from the given path', () => {
    expect(output).toContain('from "/abs/path/runtime/types/auth"')
    expect(output).toContain('AuthClaims')
    expect(output).toContain('AuthRouteRule')
    expect(output).toContain('SvcAuthHooks')
  })

  it('declares the route rule, the hooks and the event context', () => {
    expect(output).toContain('auth?: AuthRouteRule')
    expect(output).toContain('NitroRuntimeHooks')
    expect(output).toContain('interface NitroRuntimeHooks extends SvcAuthHooks {}')
    expect(output).toContain('NitroRouteRules')
    expect(output).toContain('NitroRouteConfig')
    expect(output).toContain('H3EventContext')
    expect(output).toContain('user?: AuthClaims')
    expect(output).toContain('declare module \'h3\'')
    expect(output).toContain('declare module \'nitropack\'')
    expect(output).toContain('declare module \'nitropack/types\'')
    expect(output.trimEnd().endsWith('export {}')).toBe(true)
  })
})

describe('providerNames', () => {
  it('lists configured providers by key and custom ones by name, without credentials', () => {
    const options = resolveOptions({
      token: { secret: 'x'.repeat(40) },
      providers: { google: { clientId: 'id', clientSecret: 'google-secret-value' }, mock: { mockUsers: [] }, custom: [{ name: 'acme', clientSecret: 'acme-secret-value' }], github: undefined },
    } as unknown as ModuleOptionsInput, true)
    expect(providerNames(options)).toEqual(['google', 'mock', 'acme'])
    expect(JSON.stringify(toPublicConfig(options))).not.toMatch(/secret-value/)
  })
})
