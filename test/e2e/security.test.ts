import { createLocalJWKSet, exportPKCS8, generateKeyPair, jwtVerify, SignJWT } from 'jose'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setupApp } from './app'
import { bearer, cookie, login } from './requests'
import { startServerProcess, type ServerProcess } from './server-processes'

const FIXTURE_SECRET = 'fixture-secret-0123456789-abcdefghijklmnop'
const server = await setupApp()

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })
}

describe('route rules', () => {
  const cases: Array<[string, boolean]> = [
    ['/api/protected/hello', true],
    ['/api/required', true],
    ['/api/protected-alias', true],
    ['/api/public/hello', false],
    ['/api/skip', false],
    ['/api/public-alias', false],
    ['/api/protected/open', false],
    ['/api/unruled', false],
  ]

  it.each(cases)('%s needs a token: %s', async (path, needsToken) => {
    const session = await login(server, { sub: 'rules-user' })
    const anonymous = await server.fetch(path)
    expect(anonymous.status).toBe(needsToken ? 401 : 200)
    if (needsToken) expect(await anonymous.json()).toEqual({ statusCode: 401, message: 'Authentication required', error: 'unauthorized' })
    const forged = await server.fetch(path, bearer(`${session.token}x`))
    expect(forged.status).toBe(needsToken ? 401 : 200)
    const authed = await server.fetch(path, bearer(session.token))
    expect(authed.status).toBe(200)
    // event.context.user is filled whenever a valid token is sent, protected or not.
    expect(await authed.json()).toEqual({ sub: 'rules-user' })
  })

  it('server utils: requireAuthUser answers 401 without a token and returns the user with one', async () => {
    expect((await server.fetch('/api/whoami')).status).toBe(401)
    const session = await login(server, { sub: 'util-user' })
    const res = await server.fetch('/api/whoami', bearer(session.token))
    expect(await res.json()).toEqual({ sub: 'util-user', original: null })
  })
})

describe('forged access tokens', () => {
  const secret = new TextEncoder().encode(FIXTURE_SECRET)
  const sign = (claims: Record<string, unknown>, header: Record<string, unknown> = {}) =>
    new SignJWT({ sub: 'mallory', ...claims }).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', ...header }).setIssuedAt().setExpirationTime('1h').sign(secret)

  it('a token signed like the server\'s is accepted (control)', async () => {
    const token = await sign({ iss: 'svc', aud: '' })
    expect((await server.fetch('/api/user/me', bearer(token))).status).toBe(200)
  })

  it('alg none, wrong iss, wrong aud, expired, wrong typ, altered payload and another key are all 401', async () => {
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
    const now = Math.floor(Date.now() / 1000)
    const valid = await sign({ iss: 'svc', aud: '' })
    const [h, p, s] = valid.split('.')
    const altered = JSON.parse(Buffer.from(p!, 'base64url').toString())
    altered.sub = 'admin'
    const forged = [
      `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64({ sub: 'x', iss: 'svc', aud: '', iat: now, exp: now + 3600 })}.`,
      await sign({ iss: 'other', aud: '' }),
      await sign({ iss: 'svc', aud: 'other' }),
      await new SignJWT({ sub: 'x', iss: 'svc', aud: '' }).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' }).setIssuedAt(now - 7200).setExpirationTime(now - 3600).sign(secret),
      await sign({ iss: 'svc', aud: '' }, { typ: 'JWT' }),
      `${h}.${b64(altered)}.${s}`,
      await new SignJWT({ sub: 'x', iss: 'svc', aud: '' }).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' }).setIssuedAt().setExpirationTime('1h').sign(new TextEncoder().encode('another-secret-another-secret-another')),
    ]
    for (const token of forged) {
      const res = await server.fetch('/api/user/me', bearer(token))
      expect(res.status, token).toBe(401)
    }
  })
})

describe('RS256 and JWKS', () => {
  let rs: ServerProcess
  let privatePem: string
  beforeAll(async () => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 })
    privatePem = await exportPKCS8(privateKey)
    rs = await startServerProcess({ NUXT_SVC_AUTH_TOKEN_ALGORITHM: 'RS256', NUXT_SVC_AUTH_TOKEN_PRIVATE_KEY: privatePem })
  })
  afterAll(() => rs?.stop())

  it('signs with RS256 and publishes only the public key', async () => {
    const session = await login(rs)
    const res = await rs.fetch('/.well-known/jwks.json')
    expect(res.status).toBe(200)
    const jwks = await res.json()
    expect(jwks.keys).toHaveLength(1)
    for (const part of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(jwks.keys[0]).not.toHaveProperty(part)
    const { payload, protectedHeader } = await jwtVerify(session.token, createLocalJWKSet(jwks), { issuer: 'svc', audience: '' })
    expect(protectedHeader.alg).toBe('RS256')
    expect(payload.sub).toBe('user-1')
    expect((await rs.fetch('/api/user/me', bearer(session.token))).status).toBe(200)
  })

  it('refuses an HS256 token signed with the public key (algorithm confusion)', async () => {
    const jwks = await (await rs.fetch('/.well-known/jwks.json')).json()
    const { createPublicKey } = await import('node:crypto')
    const publicPem = createPublicKey({ key: jwks.keys[0], format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString()
    const token = await new SignJWT({ sub: 'x', iss: 'svc', aud: '' }).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' }).setIssuedAt().setExpirationTime('1h').sign(new TextEncoder().encode(publicPem))
    expect((await rs.fetch('/api/user/me', bearer(token))).status).toBe(401)
  })

  it('has no JWKS with HS256', async () => {
    const res = await server.fetch('/.well-known/jwks.json')
    expect(res.status).toBe(404)
    expect(await res.json()).toMatchObject({ statusCode: 404, error: 'not_found' })
  })
})

describe('SSR access token', () => {
  it('renders the user on the server from the refresh cookie and never writes the token into the HTML', async () => {
    const session = await login(server, { sub: 'ssr-user', name: 'Sam Server', role: 'admin' })
    const res = await server.fetch('/ssr', { headers: { accept: 'text/html', cookie: `svc-refresh=${session.refreshCookie}` } })
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('Signed in as Sam Server (ssr-user, admin)')
    expect(html).not.toMatch(/eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+/)
    expect(html).not.toContain(session.refreshCookie!)
    expect(html).not.toContain('ssrAccessToken')
    // The SSR render did not rotate or consume the refresh token.
    expect((await server.fetch('/auth/refresh', cookie(session.refreshCookie!))).status).toBe(200)
  })

  it('renders logged out without a cookie or with a revoked one', async () => {
    const anonymous = await server.fetch('/ssr', { headers: { accept: 'text/html' } })
    expect(await anonymous.text()).toContain('Not signed in')
    const session = await login(server)
    await server.fetch('/auth/logout', cookie(session.refreshCookie!))
    const revoked = await server.fetch('/ssr', { headers: { accept: 'text/html', cookie: `svc-refresh=${session.refreshCookie}` } })
    expect(await revoked.text()).toContain('Not signed in')
  })

  it('is off with enableSSR false', async () => {
    const noSsr = await startServerProcess({ NUXT_SVC_AUTH_ENABLE_SSR: 'false' })
    try {
      const session = await login(noSsr)
      const res = await noSsr.fetch('/ssr', { headers: { accept: 'text/html', cookie: `svc-refresh=${session.refreshCookie}` } })
      expect(await res.text()).toContain('Not signed in')
    }
    finally {
      await noSsr.stop()
    }
  })
})

describe('cookie tossing: several refresh cookies', () => {
  // What a browser sends after a sibling subdomain set `svc-refresh` for the parent domain with a
  // longer path: the planted cookie first, the site's own after it.
  const both = (first: string, second: string) => `svc-refresh=${first}; svc-refresh=${second}`
  const post = (path: string, cookieHeader: string) => server.fetch(path, { method: 'POST', headers: { cookie: cookieHeader } })

  it('refresh is refused (401 refresh_cookie_conflict), serves neither and deletes both where it can', async () => {
    const attacker = await login(server, { sub: 'tosser', name: 'Attacker' })
    const victim = await login(server, { sub: 'tossed', name: 'Victim' })
    const res = await post('/auth/refresh', both(attacker.refreshCookie!, victim.refreshCookie!))
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({ statusCode: 401, message: expect.any(String), error: 'refresh_cookie_conflict' })
    const deletions = res.headers.getSetCookie().filter(line => line.startsWith('svc-refresh=;'))
    expect(deletions.every(line => /Max-Age=0/i.test(line))).toBe(true)
    expect(deletions.some(line => /Path=\/auth\/refresh/.test(line))).toBe(true)
    expect(deletions.some(line => /Path=\/(?:;|$)/.test(line) && !/Domain/i.test(line))).toBe(true)
    // Neither session was rotated or taken: each still refreshes on its own.
    expect((await post('/auth/refresh', `svc-refresh=${victim.refreshCookie}`)).status).toBe(200)
  })

  it('SSR renders logged out instead of as the planted session', async () => {
    const attacker = await login(server, { sub: 'tosser', name: 'Attacker' })
    const victim = await login(server, { sub: 'tossed', name: 'Victim' })
    const res = await server.fetch('/ssr', { headers: { accept: 'text/html', cookie: both(attacker.refreshCookie!, victim.refreshCookie!) } })
    const html = await res.text()
    expect(html).toContain('Not signed in')
    expect(html).not.toContain('Attacker')
  })

  it('logout with a junk cookie first still ends the session of the site\'s own cookie', async () => {
    const victim = await login(server, { sub: 'tossed', name: 'Victim' })
    expect((await post('/auth/logout', both('junk', victim.refreshCookie!))).status).toBe(200)
    expect((await post('/auth/refresh', `svc-refresh=${victim.refreshCookie}`)).status).toBe(401)
  })

  it('a __Host- name works end to end: login, SSR, refresh and logout', async () => {
    const hosted = await startServerProcess({ NUXT_SVC_AUTH_TOKEN_REFRESH_COOKIE_COOKIE_NAME: '__Host-svc-refresh' })
    try {
      const session = await login(hosted, { sub: 'host-prefixed', name: 'Hosted User' }, '__Host-svc-refresh')
      const line = session.response.headers.getSetCookie().find(l => l.startsWith('__Host-svc-refresh='))!
      expect(line).toMatch(/; Path=\/(;|$)/)
      expect(line).toContain('Secure')
      expect(line).not.toMatch(/Domain/i)
      expect(session.response.headers.getSetCookie().some(l => l.startsWith('__Host-svc-refresh-present=1'))).toBe(true)
      const jar = `__Host-svc-refresh=${session.refreshCookie}`
      const page = await hosted.fetch('/ssr', { headers: { accept: 'text/html', cookie: jar } })
      expect(await page.text()).toContain('Signed in as Hosted User')
      const refreshed = await hosted.fetch('/auth/refresh', { method: 'POST', headers: { cookie: jar } })
      expect(refreshed.status).toBe(200)
      const next = refreshed.headers.getSetCookie().find(l => l.startsWith('__Host-svc-refresh='))!.split(';')[0]!
      expect((await hosted.fetch('/auth/logout', { method: 'POST', headers: { cookie: next } })).status).toBe(200)
      expect((await hosted.fetch('/auth/refresh', { method: 'POST', headers: { cookie: next } })).status).toBe(401)
      // No start-up advice for a prefixed name (the requests above waited for the start).
      expect(hosted.output()).not.toContain('has no __Host- prefix')
    }
    finally {
      await hosted.stop()
    }
  })

  it('a production server with a Secure, unprefixed name says so once at start', async () => {
    const plain = await startServerProcess({ NUXT_SVC_AUTH_LOGGING_LEVEL: 'info' })
    try {
      // A request to the module waits for its start (the line is logged by then).
      await plain.fetch('/auth/refresh', { method: 'POST' })
      expect(plain.output().match(/has no __Host- prefix/g)).toHaveLength(1)
      expect(plain.output()).toContain('production checklist')
    }
    finally {
      await plain.stop()
    }
  })
})

describe('secrets never reach the browser', () => {
  it('are absent from the public runtime config in the page and from every client file', async () => {
    const secrets = [FIXTURE_SECRET, 'encryption-key-for-the-e2e-tests-0123456789']
    const enc = await startServerProcess({ NUXT_SVC_AUTH_TOKEN_REFRESH_ENCRYPTION_ENABLED: 'true', NUXT_SVC_AUTH_TOKEN_REFRESH_ENCRYPTION_KEY: secrets[1]! })
    try {
      const html = await (await enc.fetch('/', { headers: { accept: 'text/html' } })).text()
      expect(html).toContain('svcAuth')
      for (const secret of secrets) expect(html).not.toContain(secret)
      expect(html).not.toContain('"secret"')
    }
    finally {
      await enc.stop()
    }
    const publicDir = resolve(import.meta.dirname, '../fixtures/basic/.output/public')
    const files = filesUnder(publicDir)
    expect(files.some(f => f.endsWith('.js'))).toBe(true)
    for (const file of files) {
      const text = readFileSync(file, 'utf8')
      expect(text, file).not.toContain(FIXTURE_SECRET)
    }
  })
})

describe('encryption at rest', () => {
  it('stores no plaintext, and a wrong key gives 401, not 500', async () => {
    const key = 'encryption-key-for-the-e2e-tests-0123456789'
    const enc = await startServerProcess({ NUXT_SVC_AUTH_TOKEN_REFRESH_ENCRYPTION_ENABLED: 'true', NUXT_SVC_AUTH_TOKEN_REFRESH_ENCRYPTION_KEY: key })
    let wrong: ServerProcess | undefined
    try {
      const first = await login(enc, { sub: 'enc-user', email: 'very-private@example.com', name: 'Private Person' })
      const refreshed = await enc.fetch('/auth/refresh', cookie(first.refreshCookie!))
      expect(refreshed.status).toBe(200)
      const session = await login(enc, { sub: 'enc-user-2', email: 'other-private@example.com' })
      const files = filesUnder(enc.dataDir)
      expect(files.length).toBeGreaterThan(0)
      for (const file of files) {
        const text = readFileSync(file, 'utf8')
        for (const plain of ['very-private@example.com', 'other-private@example.com', 'Private Person', 'enc-user', first.refreshCookie!, session.refreshCookie!]) {
          expect(text).not.toContain(plain)
          expect(file).not.toContain(plain)
        }
      }
      // Same records, another key: they cannot be opened, so the session is invalid (401, not 500).
      wrong = await startServerProcess({
        NUXT_SVC_AUTH_TOKEN_REFRESH_ENCRYPTION_ENABLED: 'true',
        NUXT_SVC_AUTH_TOKEN_REFRESH_ENCRYPTION_KEY: 'another-encryption-key-0123456789-abcdef',
        NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_BASE: enc.dataDir,
      })
      const res = await wrong.fetch('/auth/refresh', cookie(session.refreshCookie!))
      expect(res.status).toBe(401)
      expect(await res.json()).toMatchObject({ error: 'invalid_refresh_token' })
      // With the right key the same record still works.
      expect((await enc.fetch('/auth/refresh', cookie(session.refreshCookie!))).status).toBe(200)
    }
    finally {
      await wrong?.stop()
      await enc.stop()
    }
  })
})
