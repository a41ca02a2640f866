import { request as httpRequest } from 'node:http'
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose'
import { Secret, TOTP } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deployedSessionFlow, mockLogin } from './deployed-flow'
import { CookieJar } from '../helpers/cookie-jar'
import { codeOf, expectLoginError, finishLogin, startLogin } from './oauth-support'
import { jsonClient, ok, type JsonClient } from './json-client'
import { loginUser, PASSWORD, post, registerUser, sentCodes, uniqueEmail } from './password-helpers'
import { bearer, chunkedPost, cookie, setCookieValue } from './requests'
import { startUpstashStorage, type UpstashStorage } from './upstash-storage'
import { startWorkerd, type WorkerdServer } from './workerd'

// The worker fixture (cloudflare-module preset) under workerd, Cloudflare's Workers runtime: each
// test below runs code of the module that depends on what the runtime offers (node:crypto's
// HKDF, AES-GCM and createPublicKey, node:net, Web Crypto random values, bcryptjs without
// threads, TOTP), and the start-up checks that Workers refuse outside a request.

let storage: UpstashStorage
let server: WorkerdServer

beforeAll(async () => {
  storage = await startUpstashStorage()
  // Text bindings: with nodejs_compat they are the worker's process.env, read as runtime config.
  server = await startWorkerd('worker', { bindings: storage.env })
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await storage?.close()
})

const totp = (secret: string, offset = 0) => new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + offset * 30_000 })

describe('a cloudflare-module build under workerd', () => {
  it('logs in with the mock provider, exchanges the code, serves a protected route, rotates and detects reuse, logs out', async () => {
    // The refresh records are sealed (tokenRefresh.encryption: AES-256-GCM, key by HKDF): every
    // rotation opens one and seals the next.
    await deployedSessionFlow(server)
  })

  it('starts without a storage call at global scope (Workers forbid I/O outside a request)', () => {
    expect(server.output()).not.toContain('Disallowed operation called within global scope')
  })

  it('signs RS256 access tokens that verify with the JWKS it publishes (createPublicKey)', async () => {
    const email = uniqueEmail('rs256')
    const { token } = await registerUser(server, email)
    const jwks = await ok<JSONWebKeySet>(await server.fetch('/.well-known/jwks.json'))
    expect(jwks.keys).toHaveLength(1)
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: 'svc-auth' })
    expect(Object.keys(jwks.keys[0]!)).not.toContain('d')
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'RS256', kid: 'svc-auth' })
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), { issuer: 'svc' })
    expect(payload).toMatchObject({ email, provider: 'password' })
  })

  it('password provider: register, emailed code, verify, token; then log in with the password (bcryptjs in the isolate\'s thread)', async () => {
    const email = uniqueEmail('worker')
    const registered = await registerUser(server, email)
    const me = await ok<{ sub: string, email: string }>(await server.fetch('/api/user/me', bearer(registered.token)))
    expect(me).toMatchObject({ email, sub: expect.stringMatching(/^w\d+$/) })
    const session = await loginUser(server, email)
    expect((await ok<{ sub: string }>(await server.fetch('/api/user/me', bearer(session.token)))).sub).toBe(me.sub)
    // Its refresh token works like any other.
    const refreshed = await server.fetch('/auth/refresh', cookie(session.refreshCookie))
    expect(refreshed.status).toBe(200)
    expect(setCookieValue(refreshed, 'svc-refresh')).toBeTruthy()
  })

  it('an internationalised domain is stored and mailed in its ASCII form (node:url domainToASCII)', async () => {
    const local = uniqueEmail('idn').split('@')[0]!
    expect((await post(server, '/auth/password/register', { email: `${local}@BÜCHER.example`, password: PASSWORD })).status).toBe(200)
    expect(await sentCodes(server, `${local}@xn--bcher-kva.example`, 'register')).toHaveLength(1)
  })

  it('a wrong password and an unknown account get the same answer, also when they arrive together', async () => {
    const email = uniqueEmail('known')
    await registerUser(server, email)
    const attempts = await Promise.all([
      post(server, '/auth/password/login', { email, password: 'Wrong-password-1' }),
      post(server, '/auth/password/login', { email: uniqueEmail('nobody'), password: PASSWORD }),
      post(server, '/auth/password/login', { email: uniqueEmail('nobody'), password: PASSWORD }),
      post(server, '/auth/password/login', { email, password: PASSWORD }),
    ])
    const bodies = await Promise.all(attempts.map(res => res.json() as Promise<{ error?: string }>))
    expect(attempts.map(res => res.status)).toEqual([400, 400, 400, 200])
    expect(bodies[0]).toEqual(bodies[1])
    expect(bodies[1]).toEqual(bodies[2])
    // Later unknown-account logins use the dummy hash the first one made (in an ended request).
    expect((await post(server, '/auth/password/login', { email: uniqueEmail('nobody'), password: PASSWORD })).status).toBe(400)
    expect((await sentCodes(server, email, 'login')).length).toBe(1)
  })

  it('two-factor: enrolment, a login that asks for the TOTP code, recovery codes (node:crypto HMAC, sealed secrets)', async () => {
    const email = uniqueEmail('totp')
    const { token } = await registerUser(server, email)
    const c = jsonClient(server)
    const { secret } = await ok<{ secret: string }>(await c.post('/auth/two-factor/enrol', {}, token))
    // The previous time step: the current one stays unused for the login below (a code counts once).
    const { recoveryCodes } = await ok<{ recoveryCodes: string[] }>(await c.post('/auth/two-factor/confirm', { code: totp(secret, -1) }, token))
    expect(recoveryCodes).toHaveLength(10)
    for (const code of recoveryCodes) expect(code).toMatch(/^[2-9a-hjkmnp-z]{5}-[2-9a-hjkmnp-z]{5}$/)

    const firstFactor = async (b: JsonClient) => {
      const seen = (await sentCodes(server, email, 'login')).length
      await ok(await b.post('/auth/password/login', { email, password: PASSWORD }))
      const codes = await sentCodes(server, email, 'login')
      expect(codes.length).toBe(seen + 1)
      const verified = await b.get(`/auth/password/login-verify?code=${codes.at(-1)!.code}`)
      expect(verified.status).toBe(302)
      const location = verified.headers.get('location')!
      expect(location).toMatch(/^\/auth\/second-factor\?flow=[\w-]+$/)
      return new URL(location, server.url).searchParams.get('flow')!
    }
    const b = jsonClient(server)
    const flow = await firstFactor(b)
    expect((await b.post('/auth/two-factor/verify', { flow, code: '000000' })).status).toBe(400)
    const done = await ok<{ redirect: string }>(await b.post('/auth/two-factor/verify', { flow, code: totp(secret) }))
    const code = new URL(done.redirect, server.url).searchParams.get('code')!
    const session = await ok<{ token: string }>(await b.post('/auth/token', { code }))
    expect((await ok<{ email: string }>(await server.fetch('/api/user/me', bearer(session.token)))).email).toBe(email)

    const r = jsonClient(server)
    const recovered = await ok<{ redirect: string }>(await r.post('/auth/two-factor/verify', { flow: await firstFactor(r), recoveryCode: recoveryCodes[0] }))
    expect(recovered.redirect).toMatch(/^\/auth\/callback\?code=/)
    expect(await ok(await c.get('/auth/two-factor/status', session.token))).toEqual({ enabled: true, recoveryCodesLeft: 9 })
  })

  it('takes the client address from cf-connecting-ip (the preset\'s default), a valid IP only', async () => {
    const address = async (headers: Record<string, string> = {}) => ok<{ address: string, header: string }>(await server.fetch('/api/test/address', { headers }))
    expect(await address({ 'cf-connecting-ip': '203.0.113.7' })).toMatchObject({ address: '203.0.113.7', header: 'cf-connecting-ip' })
    expect((await address({ 'cf-connecting-ip': '2001:db8:1::9' })).address).toBe('2001:db8:1::9')
    // Without a usable header: the socket and the trusted proxies (node:net BlockList and isIP).
    const fallback = (await address()).address
    expect((await address({ 'cf-connecting-ip': 'not-an-ip', 'x-forwarded-for': '198.51.100.1' })).address).toBe(fallback)
  })

  it('rate limits per client address: one address spends its budget, another is not affected', async () => {
    const reset = (ip: string) => post(server, '/auth/password/reset-request', { email: uniqueEmail('limits') }, { 'cf-connecting-ip': ip })
    // rateLimit.resetRequest.perIp is 3 in the fixture.
    for (let i = 0; i < 3; i++) expect((await reset('203.0.113.20')).status).toBe(200)
    const limited = await reset('203.0.113.20')
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await reset('203.0.113.21')).status).toBe(200)
  })

  it('a request without cf-connecting-ip (served outside Cloudflare) is reported once, not per request', async () => {
    const warning = 'rateLimit.clientAddressHeader is \'cf-connecting-ip\', but a request came without it'
    for (let i = 0; i < 3; i++) await post(server, '/auth/password/reset-request', { email: uniqueEmail('no-header') })
    await expect.poll(() => server.output().split(warning).length - 1).toBe(1)
    // workerd gives no socket address: such requests share one bucket, and the warning says so.
    expect(server.output()).toContain('There is no socket address here, so every such request shares one rate-limit bucket (\'unknown\').')
  })

  it('refuses a chunked body over the limit with 413 (read from the web stream; no socket here to linger on)', async () => {
    for (const path of ['/auth/password/login', '/auth/password/reset-complete']) {
      const result = await chunkedPost(server, path, 1024 * 1024, false)
      expect(result.status, `${path}: ${result.error}`).toBe(413)
      expect(JSON.parse(result.body!)).toMatchObject({ error: 'payload_too_large' })
    }
    expect((await post(server, '/auth/password/login', { email: uniqueEmail('after-413'), password: PASSWORD })).status).toBe(400)
  })

  it('cookie tossing: a refresh with two refresh cookies is refused and both are deleted for the host, its parents and every path; logout ends each', async () => {
    const attacker = await mockLogin(server)
    const victim = await mockLogin(server)
    const both = `svc-refresh=${attacker.refresh}; svc-refresh=${victim.refresh}`
    // fetch cannot set Host: the request of a browser at app.example.com, over plain HTTP/1.1.
    const refused = await postWithHost(server, '/auth/refresh', 'app.example.com', both)
    expect(refused.status).toBe(401)
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'refresh_cookie_conflict' })
    const deleted = refused.setCookies.filter(line => line.startsWith('svc-refresh=;')).map(line => `${/Domain=([^;]+)/.exec(line)?.[1] ?? '(host)'} ${/Path=([^;]+)/.exec(line)![1]}`)
    for (const place of ['(host) /', 'app.example.com /auth/', 'example.com /auth/refresh', 'example.com /']) expect(deleted).toContain(place)
    // An address for a host (node:net isIP on Workers): no domain to delete for.
    const local = await server.fetch('/auth/refresh', { method: 'POST', headers: { cookie: both } })
    expect(local.status).toBe(401)
    expect(local.headers.getSetCookie().some(line => /Domain=/.test(line))).toBe(false)
    // Neither session was used or ended by the refusal: each refreshes alone.
    const victimNext = await server.fetch('/auth/refresh', cookie(victim.refresh))
    expect(victimNext.status).toBe(200)
    // A logout with junk and a planted cookie first ends the session of the site's own cookie too.
    const current = setCookieValue(victimNext, 'svc-refresh')!
    const out = await server.fetch('/auth/logout', { method: 'POST', headers: { cookie: `svc-refresh=junk; svc-refresh=${attacker.refresh}; svc-refresh=${current}` } })
    expect(out.status).toBe(200)
    expect((await server.fetch('/auth/refresh', cookie(current))).status).toBe(401)
    expect((await server.fetch('/auth/refresh', cookie(attacker.refresh))).status).toBe(401)
  })

  it('provider logins: a state planted from another browser is refused; of two logins started in one browser, the later completes', async () => {
    const viaMock = async (cookies: string) => {
      const res = await server.fetch('/auth/mock', { headers: { cookie: cookies } })
      const authorize = new URL(res.headers.get('location')!, server.url)
      const back = await server.fetch(`${authorize.pathname}${authorize.search}`)
      return { res, callback: new URL(back.headers.get('location')!, server.url) }
    }
    const attacker = await startLogin(server, '/auth/mock')
    const authorize = await server.fetch(`${attacker.authorizeUrl.pathname}${attacker.authorizeUrl.search}`)
    const planted = new URL(authorize.headers.get('location')!, server.url)
    const { '__Host-svc-code': _binding, ...tossed } = attacker.cookies
    expectLoginError(await finishLogin(server, planted, tossed), 'invalid_state', '/')

    const jar = new CookieJar()
    const earlier = await viaMock(jar.header())
    jar.store(earlier.res)
    const later = await viaMock(jar.header())
    jar.store(later.res)
    const refused = await server.fetch(`${earlier.callback.pathname}${earlier.callback.search}`, { headers: { cookie: jar.header() } })
    expectLoginError(refused, 'invalid_state', '/')
    jar.store(refused)
    const done = await server.fetch(`${later.callback.pathname}${later.callback.search}`, { headers: { cookie: jar.header() } })
    const code = codeOf(done)
    jar.store(done)
    const session = await server.fetch('/auth/token', { method: 'POST', headers: { 'content-type': 'application/json', 'cookie': jar.header() }, body: JSON.stringify({ code }) })
    expect(session.status).toBe(200)
  })

  it('answered every request above without an unexpected error', () => {
    expect(server.output()).not.toContain('Unexpected error')
    expect(server.output()).not.toContain('Disallowed operation')
  })
})

/** A POST with a `Host` header of our choosing (fetch cannot send one): status, body and Set-Cookie lines. */
function postWithHost(target: WorkerdServer, path: string, host: string, cookies: string): Promise<{ status: number, body: string, setCookies: string[] }> {
  const url = new URL(target.url)
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, method: 'POST', headers: { host, cookie: cookies } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8'), setCookies: res.headers['set-cookie'] ?? [] }))
    })
    req.on('error', reject)
    req.end()
  })
}

/**
 * One more worker, started with the bindings of the storage and `bindings` before the tests of the
 * enclosing `describe` and stopped after them.
 */
function workerWith(bindings: Record<string, string>): () => WorkerdServer {
  let worker: WorkerdServer | undefined
  beforeAll(async () => {
    worker = await startWorkerd('worker', { bindings: { ...storage.env, ...bindings } })
  }, 60_000)
  afterAll(async () => {
    await worker?.stop()
  })
  return () => worker!
}

/** A module route answers the generic 500 (the auth context cannot be made). */
async function expectGeneric500(server: WorkerdServer): Promise<void> {
  const res = await server.fetch('/auth/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code: 'x' }) })
  expect(res.status).toBe(500)
  expect(await res.json()).toEqual({ statusCode: 500, message: 'Internal server error', error: 'internal_error' })
}

describe('a storage driver set at runtime that cannot work on Workers', () => {
  // The build checked 'upstash'; the environment (a binding) switches to memory afterwards.
  const memory = workerWith({ NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'memory' })

  it('is refused when the server starts, with the build\'s message (the build recorded the target)', async () => {
    const message = '  - svcAuth.tokenRefresh.storage.driver \'memory\' cannot work on Cloudflare Workers (Nitro preset \'cloudflare-module\'): Cloudflare Workers run many short-lived isolates with no file system and no memory they share, so sessions would vanish or differ from one request to the next. Use \'upstash\' (Redis over HTTP); see docs/deploying.md of nuxt-svc-auth.'
    await expect.poll(() => memory().output()).toContain(message)
    await expectGeneric500(memory())
  })
})

describe('a configuration mistake on Workers', () => {
  // A secret too short, as the environment (a binding) gives it: the auth context cannot be made.
  const broken = workerWith({ NUXT_SVC_AUTH_TOKEN_SECRET: 'too-short' })

  it('is reported once per start-up check (they run on the first request there); the module\'s routes answer the generic 500', async () => {
    // startWorkerd waited for a first answer: the request that ran the start-up checks. (That they
    // do not run at global scope shows above: a healthy context made there would be refused.)
    const reported = (log: string) => log.split('\n').filter(line => line.startsWith('[svc-auth] Invalid configuration:')).length
    await expect.poll(() => reported(broken().output())).toBe(2)
    expect(broken().output()).toContain('  - svcAuth.token.secret must be at least 32 bytes long.')
    await expectGeneric500(broken())
    expect((await broken().fetch('/api/protected/me')).status).toBe(500)
    await broken().fetch('/')
    expect(reported(broken().output())).toBe(2)
    expect(broken().output()).not.toContain('Disallowed operation called within global scope')
  })
})

describe('a reload of the revoked sessions left behind by a request that ended', () => {
  // Workers tear a request down when it ends: a promise it made never settles for it, and rejects
  // for every other request that awaits it. The revoked sessions are reloaded by token checks and
  // one reload is shared by all of them; each HGETALL of the list is slowed down here on demand,
  // so that the request that started it has ended before it finishes.
  let slow = false
  let slowStorage: UpstashStorage
  let worker: WorkerdServer

  beforeAll(async () => {
    slowStorage = await startUpstashStorage(async (command) => {
      if (slow && command[0]?.toUpperCase() === 'HGETALL') await new Promise(r => setTimeout(r, 1000))
    })
    worker = await startWorkerd('worker', { bindings: slowStorage.env })
  }, 60_000)

  afterAll(async () => {
    await worker?.stop()
    await slowStorage?.close()
  })

  /** A token check that must answer at once, with 200. */
  const check = async (token: string) => {
    const res = await worker.fetch('/api/protected/me', { ...bearer(token), signal: AbortSignal.timeout(5000) })
    expect(res.status, await res.clone().text()).toBe(200)
  }

  it('does not break later token checks, neither before the list was first loaded nor after', async () => {
    const { token } = await mockLogin(worker)
    // Before the first load: the reload a request left behind fails the next check at most once
    // (it awaited a promise of an ended request); the check after it loads the list again.
    slow = true
    expect(await (await worker.fetch('/api/test/leave-reload', { method: 'POST' })).json()).toEqual({ started: true })
    slow = false
    await new Promise(r => setTimeout(r, 1200))
    const firstAfter = await worker.fetch('/api/protected/me', { ...bearer(token), signal: AbortSignal.timeout(5000) })
    expect([200, 500]).toContain(firstAfter.status)
    await check(token)
    await check(token)

    // After it: once the list is older than 2 s, a reload left behind must not leave later checks
    // waiting on it (or on themselves).
    await new Promise(r => setTimeout(r, 2200))
    slow = true
    expect(await (await worker.fetch('/api/test/leave-reload', { method: 'POST' })).json()).toEqual({ started: true })
    slow = false
    await check(token)
    await new Promise(r => setTimeout(r, 1200))
    await check(token)
    await check(token)
  })

  it('still sees a revocation made elsewhere once the list is reloaded', async () => {
    const { token, refresh } = await mockLogin(worker)
    await check(token)
    slow = true
    await worker.fetch('/api/test/leave-reload', { method: 'POST' })
    slow = false
    // Logout on another instance stores the revocation; this one learns of it from a reload.
    const other = await startWorkerd('worker', { bindings: slowStorage.env })
    try {
      const out = await other.fetch('/auth/logout', { method: 'POST', headers: { cookie: `svc-refresh=${refresh}`, authorization: `Bearer ${token}` } })
      expect(out.status).toBeLessThan(300)
    }
    finally {
      await other.stop()
    }
    await expect.poll(async () => (await worker.fetch('/api/protected/me', bearer(token))).status, { timeout: 6000, interval: 200 }).toBe(401)
  })
})
