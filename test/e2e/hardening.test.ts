import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createKeyHasher } from '../../src/runtime/server/lib/store/crypto'
import { TEST_LOGIN_PATH, TEST_LOGIN_SECRET_HEADER } from '../../src/runtime/server/lib/core/test-login'
import { findTestLoginFile } from '../../src/testing/secret-file'
import { setupApp } from './app'
import { fixtureDir } from './fixtures'
import { ACCEPTS, bearer, codeCookieOf, cookie, issueCode, json, login, normalisedAnswer, rawPost, setCookieValue, tokenRequest, unknownPathLike } from './requests'
import { startServerProcess } from './server-processes'

const FIXTURE_SECRET = 'fixture-secret-0123456789-abcdefghijklmnop'
const server = await setupApp('basic', { NUXT_SVC_AUTH_IMPERSONATION_ENABLED: 'true', NUXT_SVC_AUTH_TOKEN_REFRESH_REUSE_GRACE_PERIOD: '1' })

describe('authorization codes are bound to the browser they were issued to', () => {
  it('a client without the code cookie cannot exchange the code, and the code is burnt', async () => {
    const code = await issueCode(server, { sub: 'victim-of-csrf' })
    const stranger = await server.fetch('/auth/token', json({ code }))
    expect(stranger.status).toBe(401)
    expect(await stranger.json()).toEqual({ statusCode: 401, message: 'This authorization code was issued to another browser', error: 'code_binding_mismatch' })
    expect(setCookieValue(stranger, 'svc-refresh')).toBeUndefined()
    const owner = await server.fetch('/auth/token', tokenRequest(code))
    expect(owner.status).toBe(401)
    expect(await owner.json()).toMatchObject({ error: 'invalid_code' })
  })

  it('another browser\'s code cookie does not match', async () => {
    const mine = await issueCode(server, { sub: 'mine' })
    const theirs = await issueCode(server, { sub: 'theirs' })
    expect(codeCookieOf(mine)).not.toBe(codeCookieOf(theirs))
    const res = await server.fetch('/auth/token', json({ code: theirs }, { cookie: codeCookieOf(mine) }))
    expect(res.status).toBe(401)
    expect(await res.json()).toMatchObject({ error: 'code_binding_mismatch' })
  })

  it('the right browser exchanges as before, and a browser with a binding keeps it for a second code', async () => {
    const first = await server.fetch('/api/test/code', json({ user: { sub: 'two-tabs' } }))
    const binding = first.headers.getSetCookie().find(line => line.startsWith('__Host-svc-code='))!.split(';')[0]!
    const second = await server.fetch('/api/test/code', json({ user: { sub: 'two-tabs' } }, { cookie: binding }))
    expect(second.headers.getSetCookie().find(line => line.startsWith('__Host-svc-code='))!.split(';')[0]).toBe(binding)
    for (const res of [first, second]) {
      const { code } = await res.json()
      const exchanged = await server.fetch('/auth/token', json({ code }, { cookie: binding }))
      expect(exchanged.status).toBe(200)
    }
  })

  it('createAuthorizationCode(event, user, { bindToBrowser: false }) issues a bearer code for non-browser clients', async () => {
    const res = await server.fetch('/api/test/code', json({ user: { sub: 'cli-user' }, bindToBrowser: false }))
    expect(res.headers.getSetCookie()).toEqual([])
    const { code } = await res.json()
    const exchanged = await server.fetch('/auth/token', json({ code }))
    expect(exchanged.status).toBe(200)
  })
})

describe('logout ends the whole session, whatever cookie of it is presented', () => {
  it('the victim\'s old cookie, rotated since by a thief, logs the thief out', async () => {
    const victim = await login(server, { sub: 'stolen-session' })
    const stolen = victim.refreshCookie!
    const thief = await server.fetch('/auth/refresh', cookie(stolen))
    const thiefCookie = setCookieValue(thief, 'svc-refresh')!
    expect(thief.status).toBe(200)
    // Long after the grace period of that rotation (1 s here), the victim logs out with X.
    await new Promise(r => setTimeout(r, 1200))
    expect((await server.fetch('/auth/logout', cookie(stolen))).status).toBe(200)
    const after = await server.fetch('/auth/refresh', cookie(thiefCookie))
    expect(after.status).toBe(401)
    expect(await after.json()).toMatchObject({ error: 'invalid_refresh_token' })
  })

  it('a stored record that is corrupt or of the wrong shape is treated as absent, never a 500', async () => {
    const session = await login(server, { sub: 'corrupt-record' })
    const hasher = createKeyHasher(FIXTURE_SECRET)
    const file = join(server.dataDir, 'refresh', 'rt', hasher.hash('rt', session.refreshCookie!))
    const envelope = JSON.parse(readFileSync(file, 'utf8')) as { e: number, v: string }
    for (const value of ['{"family":42}', 'not json', '[]', JSON.stringify({ ...JSON.parse(envelope.v), userId: null })]) {
      writeFileSync(file, JSON.stringify({ e: envelope.e, v: value }))
      const refresh = await server.fetch('/auth/refresh', cookie(session.refreshCookie!))
      expect(refresh.status, value).toBe(401)
      expect(await refresh.json()).toMatchObject({ error: 'invalid_refresh_token' })
      writeFileSync(file, JSON.stringify({ e: envelope.e, v: value }))
      const logout = await server.fetch('/auth/logout', cookie(session.refreshCookie!))
      expect(logout.status, value).toBe(200)
      expect(await logout.json()).toEqual({ success: true })
    }
    expect(server.output()).toMatch(/Ignoring a stored rt record \(wrong shape\)/)
    expect(server.output()).toMatch(/Ignoring a stored rt record \(not json\)/)
    expect(server.output()).not.toContain(session.refreshCookie!)
  })
})

/** Resident memory of a process in MB (Linux). */
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find(l => l.startsWith('VmRSS:'))!
  return Number(/\d+/.exec(line)![0]) / 1024
}

describe('request bodies are limited (security.maxBodySize, 16 KB)', () => {
  const endpoints = ['/auth/token', '/auth/refresh', '/auth/logout', '/auth/unimpersonate', '/auth/impersonate']

  it.each(endpoints)('%s refuses a declared Content-Length over the limit at once with 413', async (path) => {
    const res = await rawPost(server, path, { declaredLength: 100 * 1024 * 1024 })
    expect(res.status).toBe(413)
    expect(JSON.parse(res.body)).toEqual({ statusCode: 413, message: 'Request body is larger than 16384 bytes', error: 'payload_too_large' })
    expect(res.sent).toBeLessThan(1024 * 1024)
  })

  it('a chunked body is read only up to the limit: 413, and the server does not buffer the rest', async () => {
    const before = rssMb(server.pid)
    const res = await rawPost(server, '/auth/logout', { chunkedBytes: 64 * 1024 * 1024 })
    expect(res.status).toBe(413)
    expect(JSON.parse(res.body)).toMatchObject({ error: 'payload_too_large' })
    expect(res.sent).toBeLessThan(32 * 1024 * 1024)
    expect(rssMb(server.pid) - before).toBeLessThan(40)
    // The server is fine afterwards.
    expect((await server.fetch('/auth/logout', { method: 'POST' })).status).toBe(200)
  })

  it('a body within the limit is read as usual', async () => {
    const res = await server.fetch('/auth/token', json({ code: 'x'.repeat(15_000) }))
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: 'bad_request' })
    const session = await login(server, { sub: 'small-body' })
    expect((await server.fetch('/auth/refresh', { ...cookie(session.refreshCookie!), body: '{}' })).status).toBe(200)
  })
})

describe('cookie-authenticated endpoints refuse other origins', () => {
  const refused = (res: Response) => expect(res.status).toBe(403)

  it('an Origin or Referer of another site, or the null origin, is refused on token, refresh, logout and unimpersonate', async () => {
    const session = await login(server, { sub: 'origin-user' })
    const variants: Array<Record<string, string>> = [
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { referer: 'https://evil.example/page' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { 'origin': 'https://sibling.example.com', 'sec-fetch-site': 'same-site' },
    ]
    for (const headers of variants) {
      for (const path of ['/auth/refresh', '/auth/logout', '/auth/unimpersonate']) {
        const res = await server.fetch(path, { method: 'POST', headers: { cookie: `svc-refresh=${session.refreshCookie}`, ...headers } })
        refused(res)
        expect(await res.json(), `${path} ${JSON.stringify(headers)}`).toEqual({ statusCode: 403, message: 'Cross-origin requests are not allowed', error: 'cross_origin_request' })
      }
      const code = await issueCode(server)
      refused(await server.fetch('/auth/token', tokenRequest(code, headers)))
      // The code was not consumed by the refused request.
      expect((await server.fetch('/auth/token', tokenRequest(code))).status).toBe(200)
    }
    // The session survived every refused logout.
    expect((await server.fetch('/auth/refresh', cookie(session.refreshCookie!))).status).toBe(200)
  })

  it('the app\'s own origin, and requests without browser headers, pass', async () => {
    const session = await login(server, { sub: 'own-origin' })
    const own = { 'origin': server.url, 'sec-fetch-site': 'same-origin' }
    const res = await server.fetch('/auth/refresh', { method: 'POST', headers: { cookie: `svc-refresh=${session.refreshCookie}`, ...own } })
    expect(res.status).toBe(200)
    const next = setCookieValue(res, 'svc-refresh')!
    expect((await server.fetch('/auth/refresh', { method: 'POST', headers: { cookie: `svc-refresh=${next}`, referer: `${server.url}/dashboard` } })).status).toBe(200)
  })

  it('security.allowedOrigins lets a listed sibling origin in, and only that one', async () => {
    const allowed = await startServerProcess({ NUXT_SVC_AUTH_SECURITY_ALLOWED_ORIGINS: '["https://admin.example.com"]' })
    try {
      const session = await login(allowed, { sub: 'admin-app' })
      const from = (origin: string, token: string) => allowed.fetch('/auth/refresh', { method: 'POST', headers: { 'cookie': `svc-refresh=${token}`, origin, 'sec-fetch-site': 'same-site' } })
      const ok = await from('https://admin.example.com', session.refreshCookie!)
      expect(ok.status).toBe(200)
      expect((await from('https://other.example.com', setCookieValue(ok, 'svc-refresh')!)).status).toBe(403)
    }
    finally {
      await allowed.stop()
    }
  })

  it('with svcAuth.publicUrl, only that origin is the app\'s own', async () => {
    const configured = await startServerProcess({ NUXT_SVC_AUTH_PUBLIC_URL: 'https://app.example.com' })
    try {
      const session = await login(configured, { sub: 'public-url' })
      const from = (origin: string) => configured.fetch('/auth/logout', { method: 'POST', headers: { cookie: `svc-refresh=${session.refreshCookie}`, origin } })
      expect((await from(configured.url)).status).toBe(403)
      expect((await from('http://app.example.com')).status).toBe(403)
      expect((await from('https://app.example.com')).status).toBe(200)
    }
    finally {
      await configured.stop()
    }
  })

  it('bearer-authenticated routes are not affected', async () => {
    const session = await login(server, { sub: 'bearer-origin' })
    const res = await server.fetch('/api/user/me', { headers: { ...bearer(session.token).headers as Record<string, string>, origin: 'https://evil.example' } })
    expect(res.status).toBe(200)
  })
})

describe('the test-only login of a build made for tests', () => {
  it('without the build\'s secret, it answers exactly as a path the app does not know (its 404, JSON or page)', async () => {
    const { found } = findTestLoginFile({ rootDir: fixtureDir('basic') })
    const { secret } = JSON.parse(readFileSync(found!, 'utf8')) as { secret: string }
    const unknown = unknownPathLike(TEST_LOGIN_PATH)
    for (const method of ['POST', 'GET'] as const) {
      for (const accept of ACCEPTS) {
        const expected = await normalisedAnswer(server, unknown, method, accept)
        expect(expected.status, `${method} ${accept}`).toBe(404)
        expect(expected.headers.find(([name]) => name === 'content-type')?.[1], `${method} ${accept}`).toMatch(accept.startsWith('text/html') ? /^text\/html/ : /^application\/json/)
        const secrets: Array<Record<string, string>> = [{}, { [TEST_LOGIN_SECRET_HEADER]: 'guessed' }, { [TEST_LOGIN_SECRET_HEADER]: `${secret}x` }]
        for (const headers of secrets) {
          expect(await normalisedAnswer(server, TEST_LOGIN_PATH, method, accept, headers), `${method} ${accept} ${JSON.stringify(headers)}`).toEqual(expected)
        }
      }
    }
    // With the secret, the endpoint is there.
    const login = await server.fetch(TEST_LOGIN_PATH, { method: 'POST', headers: { 'content-type': 'application/json', [TEST_LOGIN_SECRET_HEADER]: secret }, body: JSON.stringify({ user: { sub: 'u1' } }) })
    expect(login.status).toBe(200)
    expect(await login.json()).toEqual({ code: expect.any(String) })
  })
})
