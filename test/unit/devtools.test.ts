import { generateKeyPairSync } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createHooks } from 'hookable'
import { SignJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { resolveOptions } from '../../src/build/resolve-options'
import { buildRuntimeConfig } from '../../src/build/runtime-config'
import { randomToken } from '../../src/runtime/server/lib/store/crypto'
import { EVENT_LOG_SIZE, EventLog, eventLogOf, hookArgs, isModuleHook } from '../../src/runtime/devtools/server/event-log'
import { DEVTOOLS_HEADER, devtoolsRefusal, isLoopbackAddress, isLoopbackHost } from '../../src/runtime/devtools/server/devtools-guard'
import { defineDevtoolsRoute, devtoolsGate } from '../../src/runtime/devtools/server/devtools-http'
import { devtoolsPage, pageSecurityPolicy, scriptJson, tabConfig } from '../../src/runtime/devtools/server/tab-page'
import { isSecretKey, maskOptions, REDACTED, redact, redactString, summarizeRequest } from '../../src/runtime/devtools/server/redact'
import { fakeEvent } from './helpers/event'

const jwt = () => new SignJWT({ sub: 'ada', email: 'ada@example.com' }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('1h').sign(new TextEncoder().encode('devtools-unit-secret-0123456789-abcdef'))

/** Every string in a JSON-safe value. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (Array.isArray(value)) return value.flatMap(strings)
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => [k, ...strings(v)])
  return []
}

describe('isSecretKey: the last word of a key name decides', () => {
  it.each([
    'secret', 'clientSecret', 'previousSecrets', 'access_token', 'refreshToken', 'id_token', 'token', 'password',
    'hashedPassword', 'sentinelPassword', 'privateKey', 'previousKeys', 'key', 'code', 'authCode', 'code_verifier',
    'cookie', 'set-cookie', 'Authorization', 'CLIENT_SECRET', 'apiKey', 'credentials',
  ])('%s is secret', key => expect(isSecretKey(key)).toBe(true))
  it.each(['cookieName', 'tokenPath', 'keyId', 'tokenType', 'token_type', 'expires_in', 'sub', 'email', 'codeChallenge', 'tokenRefresh', 'reason', 'sessionId'])(
    '%s is not', key => expect(isSecretKey(key)).toBe(false))
})

describe('redact', () => {
  it('masks secrets by key name at any depth, in arrays and maps too', async () => {
    const token = await jwt()
    const input = {
      user: { sub: 'ada', email: 'ada@example.com', hashedPassword: '$2b$12$abcdefghijklmnopqrstuv', profile: { deep: { deeper: { clientSecret: 's3cr3t' } } } },
      tokens: { access_token: 'gho_provider_token', refresh_token: 'provider-refresh', expires_in: 3600, token_type: 'Bearer' },
      list: [{ password: 'hunter2' }, { code: 123456 }],
      previousSecrets: ['old-secret-one', 'old-secret-two'],
      headers: new Map<string, unknown>([['authorization', `Bearer ${token}`], ['cookie', 'svc-refresh=abc'], ['accept', 'text/html']]),
      unset: { password: '' },
    }
    const out = redact(input) as Record<string, Record<string, unknown>>
    expect(out.user).toEqual({ sub: 'ada', email: 'ada@example.com', hashedPassword: REDACTED, profile: { deep: { deeper: { clientSecret: REDACTED } } } })
    expect(out.tokens).toEqual({ access_token: REDACTED, refresh_token: REDACTED, expires_in: 3600, token_type: 'Bearer' })
    expect(out.list).toEqual([{ password: REDACTED }, { code: REDACTED }])
    expect(out.previousSecrets).toEqual([REDACTED, REDACTED])
    expect(out.headers).toEqual({ authorization: REDACTED, cookie: REDACTED, accept: 'text/html' })
    expect(out.unset).toEqual({ password: '' })
    const text = JSON.stringify(out)
    for (const secret of ['s3cr3t', 'hunter2', '123456', 'gho_provider_token', 'provider-refresh', 'old-secret', 'abc', token, '$2b$']) expect(text).not.toContain(secret)
  })

  it('masks JWTs, opaque tokens, PEM private keys and URL passwords under any key name', async () => {
    const token = await jwt()
    const refresh = randomToken(32)
    const pem = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
    const out = redact({
      note: `token was ${token}, keep going`,
      bare: token,
      nested: [[{ value: refresh }]],
      family: 'abcdefghijklmnopqrstuvwxyz0123456789ABCD',
      sid: 'abcdefghijklmnopqrstuvwxyz0123456789ABCD',
      jti: '0b6f2d9e-5d1c-4e7a-9a55-0d8c5e1c7a11',
      pem,
      url: 'redis://default:hunter2@redis.internal:6379/0',
      short: 'family-22-chars-abcdef',
    }) as Record<string, unknown>
    expect(out.note).toBe(`token was ${REDACTED}, keep going`)
    expect(out.bare).toBe(REDACTED)
    expect(out.nested).toEqual([[{ value: REDACTED }]])
    expect(out.family).toBe('abcdefghijklmnopqrstuvwxyz0123456789ABCD')
    expect(out.sid).toBe('abcdefghijklmnopqrstuvwxyz0123456789ABCD')
    expect(out.jti).toBe('0b6f2d9e-5d1c-4e7a-9a55-0d8c5e1c7a11')
    expect(out.pem).toBe(`${REDACTED}\n`)
    expect(out.url).toBe(`redis://default:${REDACTED}@redis.internal:6379/0`)
    expect(out.short).toBe('family-22-chars-abcdef')
    expect(redactString('plain words')).toBe('plain words')
  })

  it('summarizes an h3 event (method and path, query values hidden), requests and other objects', () => {
    const event = fakeEvent({ method: 'GET', url: '/auth/mock?code=abc123&state=xyz', headers: { cookie: 'svc-refresh=secret-cookie', authorization: 'Bearer t' } })
    const request = new Request('https://app.example/auth/token?code=zzz', { method: 'POST', headers: { authorization: 'Bearer abc' } })
    class Store {
      secret = 'inside-a-class'
    }
    const out = redact({ event, request, req: event.node.req, when: new Date('2026-01-02T03:04:05Z'), error: new TypeError(`bad ${randomToken(32)}`), store: new Store(), fn: function hookFn() {}, bytes: new Uint8Array(4), big: 10n }) as Record<string, unknown>
    expect(out.event).toBe(`[H3Event GET /auth/mock?code=${REDACTED}&state=${REDACTED}]`)
    expect(out.request).toBe(`[Request POST /auth/token?code=${REDACTED}]`)
    expect(out.req).toBe(`[IncomingMessage GET /auth/mock?code=${REDACTED}&state=${REDACTED}]`)
    expect(out.when).toBe('2026-01-02T03:04:05.000Z')
    expect(out.error).toEqual({ name: 'TypeError', message: `bad ${REDACTED}` })
    expect(out.store).toBe('[Store]')
    expect(out.fn).toBe('[Function hookFn]')
    expect(out.bytes).toBe('[Uint8Array 4 bytes]')
    expect(out.big).toBe('10')
    expect(JSON.stringify(out)).not.toMatch(/secret-cookie|inside-a-class|abc123|zzz/)
    expect(summarizeRequest('POST', '/auth/token')).toBe('POST /auth/token')
  })

  it('handles cycles, throwing getters, depth and size without throwing', () => {
    const a: Record<string, unknown> = { name: 'a' }
    a.self = a
    a.list = [a, { back: a }]
    const getter = Object.defineProperty({ fine: 1 }, 'boom', {
      enumerable: true,
      get: () => {
        throw new Error('no')
      },
    })
    let deep: Record<string, unknown> = { leaf: 'x' }
    for (let i = 0; i < 20; i++) deep = { deep }
    const out = redact({ a, getter, deep, long: 'x'.repeat(5000), many: Array.from({ length: 120 }, (_, i) => i) }) as Record<string, unknown>
    expect(out.a).toEqual({ name: 'a', self: '[Circular]', list: ['[Circular]', { back: '[Circular]' }] })
    expect(out.getter).toEqual({ fine: 1, boom: '[Unreadable]' })
    expect(JSON.stringify(out.deep)).toContain('[Object]')
    expect((out.long as string).length).toBe(1001)
    expect(out.many).toHaveLength(51)
    expect((out.many as unknown[])[50]).toBe('… 70 more')
    // The same object twice (not a cycle) is shown twice.
    const shared = { v: 1 }
    expect(redact({ x: shared, y: shared })).toEqual({ x: { v: 1 }, y: { v: 1 } })
    expect(() => JSON.stringify(redact(globalThis))).not.toThrow()
  })
})

describe('redaction of credentials in URLs and of credential key names', () => {
  it('masks a URL password up to the last @ of the authority, as URL parsers read it', () => {
    expect(redactString('redis://default:p@ss@redis.internal:6379/0')).toBe(`redis://default:${REDACTED}@redis.internal:6379/0`)
    expect(redactString('redis://:p@ss@w@rd@redis.internal')).toBe(`redis://:${REDACTED}@redis.internal`)
    expect(redactString('redis://u:pw@redis.internal/0?note=a@b')).toBe(`redis://u:${REDACTED}@redis.internal/0?note=a@b`)
    // A password with an unencoded / or ? is no valid URL, but still a password.
    expect(redactString('redis://u:ab/cd?ef@redis.internal:6379')).toBe(`redis://u:${REDACTED}@redis.internal:6379`)
    // In the middle of a text, several times.
    expect(redactString('from rediss://u:one@a:1 to postgres://v:tw@o@b/db failed')).toBe(`from rediss://u:${REDACTED}@a:1 to postgres://v:${REDACTED}@b/db failed`)
    // A port is no password, an @ in the path no userinfo, a user without a password no secret.
    for (const url of ['https://registry.example:443/@scope/pkg', 'https://example.com/@alice', 'redis://redis.internal:6379/0', 'https://user@example.com/x', 'http://[::1]:3000/@x', 'mailto:ada@example.com']) {
      expect(redactString(url)).toBe(url)
    }
  })

  it('masks the values of secret query and fragment parameters, keeps the others', () => {
    const url = 'https://api.example/cb?password=hunter2&token=t0k&secret=s3&key=k1&api_key=a1&apikey=b1&access_token=c1&client_secret=d1&code=e1&pass=f1&auth=g1&sslpassword=h1&x-api-key=i1&state=j1&sig=k2&page=2&tokenPath=%2Fauth%2Ftoken&keyId=main&empty_token='
    expect(redactString(url)).toBe(`https://api.example/cb?password=${REDACTED}&token=${REDACTED}&secret=${REDACTED}&key=${REDACTED}&api_key=${REDACTED}&apikey=${REDACTED}&access_token=${REDACTED}&client_secret=${REDACTED}&code=${REDACTED}&pass=${REDACTED}&auth=${REDACTED}&sslpassword=${REDACTED}&x-api-key=${REDACTED}&state=${REDACTED}&sig=${REDACTED}&page=2&tokenPath=%2Fauth%2Ftoken&keyId=main&empty_token=`)
    expect(redactString('/auth/callback#access_token=c1&token_type=bearer&expires_in=3600')).toBe(`/auth/callback#access_token=${REDACTED}&token_type=bearer&expires_in=3600`)
    expect(redactString('redis://h:6379/0?password=hunter2&db=1')).toBe(`redis://h:6379/0?password=${REDACTED}&db=1`)
    expect(redactString('postgres://u:pw@db.internal/app?sslmode=require&sslpassword=x%20y')).toBe(`postgres://u:${REDACTED}@db.internal/app?sslmode=require&sslpassword=${REDACTED}`)
    // A value ends where the next parameter begins: unencoded separators in a secret are masked too.
    expect(redactString('/x?password=ab;cd&db=1')).toBe(`/x?password=${REDACTED}&db=1`)
    expect(redactString('/x?password=ab&cd#ef&db=1')).toBe(`/x?password=${REDACTED}&db=1`)
    expect(redactString('jdbc:sqlserver://h:1433;user=sa;password=p;w;encrypt=true')).toBe(`jdbc:sqlserver://h:1433;user=sa;password=${REDACTED};encrypt=true`)
    expect(redactString('/login?next=/cb?token=t1')).toBe(`/login?next=/cb?token=${REDACTED}`)
    // Percent-encoded names are decoded first; a malformed one is read as it is.
    expect(redactString('/x?client%5Fsecret=d1&%E0%A4%A=1')).toBe(`/x?client%5Fsecret=${REDACTED}&%E0%A4%A=1`)
    expect(redactString('a & b = c, and secret=plain text')).toBe('a & b = c, and secret=plain text')
  })

  it.each(['pass', 'smtpPass', 'auth', 'basicAuth', 'proxy_auth', 'dsn', 'sentryDsn', 'apikey', 'apiKey', 'x-api-key', 'credentials', 'passphrase', 'salt', 'sslpassword', 'authtoken', 'clientsecret'])(
    '%s is a secret key name', key => expect(isSecretKey(key)).toBe(true))
  it.each(['authPath', 'cookieName', 'tokenPath', 'keyId', 'tokenEndpointAuthMethod', 'oauth', 'bypass', 'passwordPolicy', 'passwordHashRounds', 'codeOnlyVerify', 'compass', 'monkey', 'authorizationParams', 'authorizationUrl'])(
    '%s is not', key => expect(isSecretKey(key)).toBe(false))

  it('masks values under credential key names, keeps the route-rule values of auth', () => {
    const out = redact({
      storage: { driver: 'redis', auth: 'default:hunter2', pass: 'hunter3', dsn: 'redis://h:6379', apikey: 'key-1', credentials: 'user:pw', passphrase: 'words', salt: 'pinch' },
      smtp: { host: 'mail.internal', auth: { user: 'mailer', pass: 'hunter4' } },
      routeRules: { '/api/**': { auth: 'required' }, '/api/public/**': { auth: 'public' }, '/admin/**': { auth: true }, '/x': { auth: 'protected' }, '/y': { auth: 'skip' }, '/z': { auth: false } },
      numeric: { auth: 123456 },
    }) as Record<string, Record<string, unknown>>
    expect(out.storage).toEqual({ driver: 'redis', auth: REDACTED, pass: REDACTED, dsn: REDACTED, apikey: REDACTED, credentials: REDACTED, passphrase: REDACTED, salt: REDACTED })
    expect(out.smtp).toEqual({ host: 'mail.internal', auth: { user: 'mailer', pass: REDACTED } })
    expect(out.routeRules).toEqual({ '/api/**': { auth: 'required' }, '/api/public/**': { auth: 'public' }, '/admin/**': { auth: true }, '/x': { auth: 'protected' }, '/y': { auth: 'skip' }, '/z': { auth: false } })
    expect(out.numeric).toEqual({ auth: REDACTED })
    expect(JSON.stringify(out)).not.toMatch(/hunter|key-1|user:pw|words|pinch|123456/)
  })

  it('maskOptions hides storage URLs\' passwords and secret parameters, and keeps the useful non-secrets', () => {
    const options = resolveOptions({
      token: { secret: 'token-secret-0123456789-abcdefghijklmnop' },
      tokenRefresh: { storage: { driver: 'redis', url: 'redis://default:p@ss@redis.internal:6379/0?password=p%40ss2' } },
      providers: { mock: { mockUsers: [{ sub: 'ada', email: 'ada@example.com', name: 'Ada' }] } },
    }, true)
    const masked = maskOptions(buildRuntimeConfig(options, { dev: true }).private) as Record<string, Record<string, Record<string, unknown>>>
    expect(masked.tokenRefresh!.storage!.url).toBe(`redis://default:${REDACTED}@redis.internal:6379/0?password=${REDACTED}`)
    expect(JSON.stringify(masked)).not.toMatch(/p@ss|p%40ss/)
    expect(masked.token!.keyId).toBe('svc-auth')
    expect(masked.tokenRefresh!.cookie!.cookieName).toBe('svc-refresh')
    expect(masked.endpoints).toMatchObject({ authPath: '/auth', tokenPath: '/auth/token' })
  })
})

describe('EventLog', () => {
  it('keeps the last 50 calls, redacted when recorded, with increasing ids', () => {
    const log = new EventLog()
    expect(log.size).toBe(EVENT_LOG_SIZE)
    for (let i = 1; i <= 60; i++) log.record('svc:session:revoked', [{ sessionId: `s${i}`, userId: 'ada', reason: 'logout', refreshToken: `rt-${i}` }])
    const events = log.list()
    expect(events).toHaveLength(50)
    expect(events[0]!.id).toBe(11)
    expect(events[49]!).toMatchObject({ id: 60, name: 'svc:session:revoked', payload: { sessionId: 's60', refreshToken: REDACTED } })
    expect(log.list(58).map(e => e.id)).toEqual([59, 60])
    log.clear()
    expect(log.list()).toEqual([])
    expect(log.record('svc:success', [{}]).id).toBe(61)
  })

  it('does not keep a reference to the payload: later changes do not reach the log', () => {
    const log = new EventLog(5, () => new Date('2026-01-01T00:00:00Z'))
    const payload = { user: { sub: 'ada' } }
    log.record('svc:userInfo', [payload])
    payload.user.sub = 'changed'
    expect(log.list()[0]).toEqual({ id: 1, time: '2026-01-01T00:00:00.000Z', name: 'svc:userInfo', payload: { user: { sub: 'ada' } } })
  })

  it('records svc:* hook calls of a hookable through beforeEach, as the Nitro plugin does', async () => {
    const hooks = createHooks<Record<string, (payload: unknown) => void>>()
    const app = { hooks }
    const log = eventLogOf(app)
    expect(eventLogOf(app)).toBe(log)
    hooks.beforeEach((event) => {
      if (isModuleHook(event.name)) log.record(event.name, hookArgs(event.name, event.args))
    })
    const token = await jwt()
    await hooks.callHook('svc:success', { user: { sub: 'ada' }, tokens: { access_token: token }, provider: 'mock', event: fakeEvent({ url: '/auth/mock?code=c' }) })
    await hooks.callHook('render:html', { html: 'not ours' })
    const [event, ...rest] = log.list()
    expect(rest).toEqual([])
    expect(event).toMatchObject({ name: 'svc:success', payload: { user: { sub: 'ada' }, tokens: { access_token: REDACTED }, provider: 'mock', event: `[H3Event GET /auth/mock?code=${REDACTED}]` } })
    expect(eventLogOf({})).not.toBe(log)
  })

  it('takes the payload from either hookable: with the hook name first (hookable 5, Nitro 2) or without', () => {
    const payload = { sessionId: 's1', userId: 'ada', reason: 'logout' }
    expect(hookArgs('svc:session:revoked', ['svc:session:revoked', payload])).toEqual([payload])
    expect(hookArgs('svc:session:revoked', [payload])).toEqual([payload])
    const log = new EventLog()
    log.record('svc:session:revoked', hookArgs('svc:session:revoked', ['svc:session:revoked', payload]))
    expect(log.list()[0]!.payload).toEqual(payload)
  })
})

describe('maskOptions', () => {
  it('shows every secret of the resolved options as ••• and keeps the rest', () => {
    const pem = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
    const secrets = ['token-secret-0123456789-abcdefghijklmnop', 'previous-secret-0123456789-abcdefghijk', 'redis-password-1', 'sentinel-password-1', 'encryption-key-0123456789-abcdefghijkl', 'old-encryption-key-0123456789-abcdefg', 'google-client-secret', 'acme-client-secret', 'mock-client-secret-x', 'url-password-1', 'cluster-password-1']
    const options = resolveOptions({
      token: { secret: secrets[0], previousSecrets: [secrets[1]!], privateKey: pem, previousKeys: [{ keyId: 'old', key: pem }] },
      tokenRefresh: {
        storage: { driver: 'redis', url: `redis://user:${secrets[9]}@redis.internal:6379`, password: secrets[2], sentinelPassword: secrets[3], cluster: [{ host: 'r1', port: 7000, password: secrets[10] }] as never },
        encryption: { enabled: true, key: secrets[4], previousKeys: [secrets[5]!] },
      },
      providers: {
        google: { clientId: 'google-id', clientSecret: secrets[6]! },
        custom: { acme: { clientId: 'acme-id', clientSecret: secrets[7]!, issuer: 'https://acme.example' } } as never,
        mock: { clientSecret: secrets[8], mockUsers: [{ sub: 'ada', email: 'ada@example.com', name: 'Ada' }] },
        password: {},
      },
    }, true)
    const config = buildRuntimeConfig(options, { dev: true })
    const masked = maskOptions(config.private)
    const text = JSON.stringify(masked)
    for (const secret of [...secrets, 'PRIVATE KEY', 'mock-secret']) expect(text).not.toContain(secret)
    const m = masked as Record<string, Record<string, Record<string, unknown>>>
    expect(m.token!.secret).toBe(REDACTED)
    expect(m.token!.previousKeys).toEqual([{ keyId: 'old', key: REDACTED }])
    expect(m.token!.keyId).toBe('svc-auth')
    expect(m.tokenRefresh!.storage).toMatchObject({ driver: 'redis', password: REDACTED, url: `redis://user:${REDACTED}@redis.internal:6379`, host: '127.0.0.1' })
    expect(m.providers!.google).toMatchObject({ clientId: 'google-id', clientSecret: REDACTED })
    expect((m.providers!.mock as Record<string, unknown>).mockUsers).toEqual([{ sub: 'ada', email: 'ada@example.com', name: 'Ada' }])
    // Nothing of the public part (what the browser gets anyway) is hidden.
    const pub = config.public as unknown as Record<string, unknown>
    for (const key of ['endpoints', 'redirect', 'clientMiddleware', 'enableSSR'] as const) expect(m[key]).toEqual(pub[key])
    expect(strings(masked)).toContain('svc-refresh')
  })
})

describe('guard', () => {
  it('knows loopback addresses and hosts', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) expect(isLoopbackAddress(a), a).toBe(true)
    for (const a of ['10.0.0.2', '192.168.1.5', '::ffff:10.0.0.1', 'fe80::1', '', undefined, '1127.0.0.1']) expect(isLoopbackAddress(a), String(a)).toBe(false)
    for (const h of ['localhost', 'localhost:3000', 'LOCALHOST:3000', 'app.localhost:3000', '127.0.0.1:3000', '127.0.0.1', '[::1]:3000', '[::1]']) expect(isLoopbackHost(h), h).toBe(true)
    for (const h of ['evil.example', 'evil.example:3000', 'localhost.evil.example', '127.0.0.1.nip.io', '192.168.1.5:3000', '', undefined, 'local host']) expect(isLoopbackHost(h), String(h)).toBe(false)
  })

  it('refuses other machines, rebinding hosts, cross-site requests and JSON requests without the header', () => {
    const ok = { remoteAddress: '127.0.0.1', host: 'localhost:3000', fetchSite: 'same-origin', marker: '1' }
    expect(devtoolsRefusal(ok, { checkPeer: true, json: true })).toBeUndefined()
    expect(devtoolsRefusal({ ...ok, remoteAddress: '192.168.1.20' }, { checkPeer: true, json: true })).toMatch(/this machine/)
    expect(devtoolsRefusal({ ...ok, remoteAddress: undefined }, { checkPeer: false, json: true })).toBeUndefined()
    expect(devtoolsRefusal({ ...ok, host: 'attacker.example:3000' }, { checkPeer: true, json: true })).toMatch(/localhost/)
    expect(devtoolsRefusal({ ...ok, fetchSite: 'cross-site' }, { checkPeer: true, json: true })).toMatch(/Cross-site/)
    expect(devtoolsRefusal({ ...ok, fetchSite: 'same-site' }, { checkPeer: true, json: false })).toMatch(/Cross-site/)
    expect(devtoolsRefusal({ ...ok, fetchSite: 'none', marker: undefined }, { checkPeer: true, json: false })).toBeUndefined()
    expect(devtoolsRefusal({ ...ok, fetchSite: 'none' }, { checkPeer: true, json: true })).toMatch(/Cross-site/)
    expect(devtoolsRefusal({ ...ok, marker: undefined }, { checkPeer: true, json: true })).toMatch(/header/)
    expect(devtoolsRefusal({ ...ok, fetchSite: undefined }, { checkPeer: true, json: true })).toBeUndefined()
  })
})

describe('the h3 side of the guard', () => {
  const local = { 'host': 'localhost:3000', [DEVTOOLS_HEADER]: '1', 'sec-fetch-site': 'same-origin' }

  it('the dev server gate answers 403 to other machines and rebinding hosts and lets the rest through', async () => {
    const remote = fakeEvent({ url: '/__svc_auth__/devtools/events', remoteAddress: '192.168.1.20', headers: local })
    expect(await devtoolsGate(remote)).toEqual({ statusCode: 403, message: 'The DevTools routes answer requests from this machine only', error: 'forbidden' })
    expect(remote.node.res.statusCode).toBe(403)
    const rebound = fakeEvent({ url: '/__svc_auth__/devtools', remoteAddress: '127.0.0.1', headers: { host: 'attacker.example:3000' } })
    expect(await devtoolsGate(rebound)).toMatchObject({ statusCode: 403, error: 'forbidden' })
    for (const remoteAddress of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
      expect(await devtoolsGate(fakeEvent({ url: '/__svc_auth__/devtools', remoteAddress, headers: { host: 'localhost:3000' } }))).toBeUndefined()
    }
  })

  it('a DevTools route needs a loopback host, and for JSON the header from the same origin; errors are JSON', async () => {
    const route = defineDevtoolsRoute(() => ({ fine: true }), { json: true })
    const ok = fakeEvent({ headers: local })
    expect(await route(ok)).toEqual({ fine: true })
    expect(ok.node.res.getHeader('cache-control')).toBe('no-store')
    expect(await route(fakeEvent({ headers: { ...local, host: 'evil.example' } }))).toMatchObject({ statusCode: 403, error: 'forbidden' })
    expect(await route(fakeEvent({ headers: { host: 'localhost:3000' } }))).toMatchObject({ statusCode: 403, message: `The ${DEVTOOLS_HEADER} header is required` })
    expect(await route(fakeEvent({ headers: { ...local, 'sec-fetch-site': 'cross-site' } }))).toMatchObject({ statusCode: 403, error: 'forbidden' })
    const failing = defineDevtoolsRoute(() => {
      throw new Error('boom with a secret')
    }, { json: true })
    expect(await failing(fakeEvent({ headers: local }))).toEqual({ statusCode: 500, message: 'Internal server error', error: 'internal_error' })
  })
})

describe('the tab page', () => {
  it('the real template gets every placeholder filled, its settings once, as JSON', () => {
    const template = readFileSync(new URL('../../src/runtime/devtools/app/tab.html', import.meta.url), 'utf8')
    const page = devtoolsPage(template, { nonce: 'N0NCE', baseURL: '/', header: DEVTOOLS_HEADER })
    expect(page).not.toMatch(/%NONCE%|%CONFIG%/)
    const config = /<script type="application\/json" id="svc-auth-config">(.*?)<\/script>/.exec(page)
    expect(JSON.parse(config![1]!)).toEqual(tabConfig('/', DEVTOOLS_HEADER))
    expect(page.match(/<(script|style)\b[^>]*>/g)!.filter(tag => !tag.includes('application/json')).every(tag => tag.includes('nonce="N0NCE"'))).toBe(true)
    // Self-contained: nothing loaded from elsewhere.
    expect(page).not.toMatch(/\b(src|href)=["']?https?:/)
  })

  it('fills in its nonce and settings under the base URL, safely inside a script', () => {
    const template = '<script nonce="%NONCE%">x</script><style nonce="%NONCE%"></style><script type="application/json">%CONFIG%</script>'
    const page = devtoolsPage(template, { nonce: 'n0nce', baseURL: '/app/', header: 'x-svc-auth-devtools' })
    expect(page).not.toContain('%NONCE%')
    expect(page.match(/nonce="n0nce"/g)).toHaveLength(2)
    expect(tabConfig('/app/', 'x-h')).toEqual({ appBase: '/app/', api: { events: '/app/__svc_auth__/devtools/events', options: '/app/__svc_auth__/devtools/options' }, header: 'x-h' })
    expect(tabConfig('/', 'x-h').api.events).toBe('/__svc_auth__/devtools/events')
    // The audit panel's route only when the audit log is on.
    expect(tabConfig('/app/', 'x-h', true).api).toEqual({ events: '/app/__svc_auth__/devtools/events', options: '/app/__svc_auth__/devtools/options', audit: '/app/__svc_auth__/devtools/audit' })
    expect(devtoolsPage('%CONFIG%', { nonce: 'n', baseURL: '/', header: 'x-h', audit: true })).toContain('"audit":"/__svc_auth__/devtools/audit"')
    expect(scriptJson({ a: '</script><!--' })).toBe('{"a":"\\u003c/script>\\u003c!--"}')
    expect(pageSecurityPolicy('abc')).toContain(`script-src 'nonce-abc'`)
    expect(pageSecurityPolicy('abc')).toContain(`frame-ancestors 'self'`)
  })
})
