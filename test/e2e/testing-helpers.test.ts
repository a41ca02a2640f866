import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createPage, fetch, setup, useTestContext } from '@nuxt/test-utils/e2e'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestAuth, type TestAuth } from '../../src/testing'
import { createLoggedInPage, loginAs } from '../../src/testing/e2e'
import { TEST_LOGIN_FILE, TEST_LOGIN_PATH, TEST_LOGIN_SECRET_HEADER } from '../../src/runtime/server/lib/core/test-login'
import { ACCEPTS, normalisedAnswer, unknownPathLike } from './requests'

/**
 * The test helpers as a host app uses them: the playground, built by @nuxt/test-utils for this
 * file (a build made for tests inside the test runner, so it has the test-only login), run in
 * production mode with the mock provider switched on from the environment, and Chromium for the
 * logged-in pages.
 */
const playground = resolve(import.meta.dirname, '../../playground')
const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
if (!existsSync(executablePath)) throw new Error(`Chromium not found at ${executablePath}: apt-get install -y chromium, or set CHROMIUM_PATH`)

// A production build, like `nuxi build` (the test runner sets NODE_ENV=test).
process.env.NODE_ENV = 'production'

await setup({
  rootDir: playground,
  build: true,
  server: true,
  browser: true,
  browserOptions: { type: 'chromium', launch: { executablePath, args: CHROMIUM_ARGS } },
  setupTimeout: 300_000,
  env: {
    NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'memory',
    NUXT_SVC_AUTH_PROVIDERS_MOCK_ENABLE_IN_PRODUCTION: 'true',
    NUXT_SVC_AUTH_LOGGING_LEVEL: 'warn',
  },
})

let auth: TestAuth
beforeAll(async () => {
  auth = await createTestAuth({ rootDir: playground })
})
afterAll(() => auth?.dispose())

/** The test-only login endpoint, asked directly. */
function testLogin(headers: Record<string, string>, body: unknown = { user: { sub: 'u1' } }) {
  return fetch(TEST_LOGIN_PATH, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
}

function buildSecret(): string {
  const file = join(useTestContext().nuxt!.options.buildDir, TEST_LOGIN_FILE)
  return (JSON.parse(readFileSync(file, 'utf8')) as { secret: string }).secret
}

describe('loginAs through the mock provider', () => {
  it('logs a mock user in and returns a bearer token that opens protected routes', async () => {
    const session = await loginAs('ada@example.com')
    expect(session.user).toMatchObject({ sub: 'mock:ada', email: 'ada@example.com', name: 'Ada Admin', role: 'admin', provider: 'mock' })
    expect(session.expiresIn).toBe(3600)
    expect(session.headers.authorization).toBe(`Bearer ${session.accessToken}`)
    expect(await session.$fetch('/api/notes')).toMatchObject({ owner: 'mock:ada' })
    expect(await session.$fetch('/api/user/me')).toMatchObject({ sub: 'mock:ada', role: 'admin' })
    expect((await fetch('/api/notes')).status).toBe(401)
  })

  it('keeps the cookies of the flow: the refresh cookie refreshes, rotates, and logs out', async () => {
    const session = await loginAs(1)
    const refreshCookie = session.cookies.find(c => c.name === 'svc-refresh')
    expect(refreshCookie).toMatchObject({ httpOnly: true, secure: true, path: '/' })
    expect(session.cookieHeader).toContain(`svc-refresh=${refreshCookie!.value}`)
    // The cookie alone never authenticates a route; it gets a new access token.
    expect((await fetch('/api/notes', { headers: { cookie: session.cookieHeader } })).status).toBe(401)
    const first = session.accessToken
    const second = await session.refresh()
    expect(second).not.toBe(first)
    expect(session.cookies.find(c => c.name === 'svc-refresh')!.value).not.toBe(refreshCookie!.value)
    expect(await session.$fetch('/api/notes')).toMatchObject({ owner: 'mock:una' })
    await session.logout()
    expect(session.cookies.find(c => c.name === 'svc-refresh')).toBeUndefined()
    expect((await fetch('/auth/refresh', { method: 'POST', headers: { cookie: `svc-refresh=${refreshCookie!.value}` } })).status).toBe(401)
  })

  it('fails with the reason when the mock provider refuses', async () => {
    await expect(loginAs('nobody@example.com')).rejects.toThrow(/login through the mock provider failed: invalid_request/)
  })
})

describe('loginAs through the test-only login', () => {
  it('logs any user in, with claims (the app\'s customClaims handler applies)', async () => {
    const session = await loginAs({ sub: 'user-42', email: 'quinn@example.com', name: 'Quinn Tester', role: 'editor' }, { claims: { plan: 'pro' } })
    expect(session.user).toMatchObject({ sub: 'user-42', name: 'Quinn Tester', provider: 'test', role: 'editor', plan: 'pro' })
    expect(await session.$fetch('/api/notes')).toMatchObject({ owner: 'user-42', notes: ['Welcome back, Quinn Tester.', expect.any(String)] })
    const response = await session.fetch('/api/user/me')
    expect(response.status).toBe(200)
  })

  it('without the build\'s secret, it answers exactly as a path the app does not know: status, headers and body', async () => {
    const unknown = unknownPathLike(TEST_LOGIN_PATH)
    const secrets: Array<Record<string, string>> = [{}, { [TEST_LOGIN_SECRET_HEADER]: 'guessed' }, { [TEST_LOGIN_SECRET_HEADER]: `${buildSecret()}x` }]
    for (const method of ['POST', 'GET'] as const) {
      for (const accept of ACCEPTS) {
        // (The playground's pages send a visitor without a session to its login page.)
        const expected = await normalisedAnswer({ fetch }, unknown, method, accept)
        expect(expected.status, `${method} ${accept}`).toBeGreaterThanOrEqual(300)
        for (const headers of secrets) {
          expect(await normalisedAnswer({ fetch }, TEST_LOGIN_PATH, method, accept, headers), `${method} ${accept} ${JSON.stringify(headers)}`).toEqual(expected)
        }
      }
    }
  })

  it('with the secret: malformed input is a 400, another origin a 403, and the code is single-use and bound to the caller', async () => {
    const secret = { [TEST_LOGIN_SECRET_HEADER]: buildSecret() }
    expect((await testLogin(secret, { user: { name: 'no subject' } })).status).toBe(400)
    expect((await testLogin(secret, { user: { sub: 'u1' }, redirect: 'https://evil.example/' })).status).toBe(400)
    expect((await testLogin(secret, 'not an object')).status).toBe(400)
    expect((await testLogin({ ...secret, origin: 'https://evil.example' })).status).toBe(403)
    const issued = await testLogin(secret)
    expect(issued.status).toBe(200)
    const { code } = await issued.json() as { code: string }
    const codeCookie = issued.headers.getSetCookie().map(line => line.split(';')[0]!).find(pair => /^(?:__Host-)?svc-code=/.test(pair))!
    const exchange = (cookie?: string) => fetch('/auth/token', { method: 'POST', headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) }, body: JSON.stringify({ code }) })
    expect(((await (await exchange(codeCookie)).json()) as { token: string }).token).toMatch(/^eyJ/)
    expect(((await (await exchange(codeCookie)).json()) as { error: string }).error).toBe('invalid_code')
    const other = await (await testLogin(secret)).json() as { code: string }
    const stolen = await fetch('/auth/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code: other.code }) })
    expect(((await stolen.json()) as { error: string }).error).toBe('code_binding_mismatch')
  })

  it('keeps the secret out of the built output: the server holds its hash only', () => {
    const output = useTestContext().nuxt!.options.nitro.output!.dir!
    const secret = buildSecret()
    const hash = createHash('sha256').update(secret).digest('hex')
    const everything = filesUnder(output).map(file => readFileSync(file, 'latin1'))
    expect(everything.some(text => text.includes(secret))).toBe(false)
    expect(everything.some(text => text.includes(hash))).toBe(true)
    expect(filesUnder(join(output, 'public')).some(file => readFileSync(file, 'latin1').includes(TEST_LOGIN_PATH))).toBe(false)
  })
})

describe('tokens minted without HTTP (nuxt-svc-auth/testing)', () => {
  it('are accepted by the running app, and an impersonated one is seen as such', async () => {
    const { headers } = await auth.mint({ sub: 'mock:gus', name: 'Gus Guest', role: 'guest' })
    expect(await (await fetch('/api/notes', { headers })).json()).toMatchObject({ owner: 'mock:gus' })
    const impersonated = await auth.mintImpersonated({ sub: 'mock:una', name: 'Una User' }, { sub: 'mock:ada', role: 'admin' }, { reason: 'support' })
    expect(await (await fetch('/api/user/me', { headers: impersonated.headers })).json()).toMatchObject({ sub: 'mock:una', impersonation: { originalUserSub: 'mock:ada', reason: 'support' } })
    const foreign = await createTestAuth({ config: { token: { secret: 'a-different-secret-0123456789-abcdefghijkl' } } })
    expect((await fetch('/api/notes', { headers: (await foreign.mint({ sub: 'mock:ada' })).headers })).status).toBe(401)
  })
})

describe('createLoggedInPage', () => {
  it('opens a protected page already logged in as a mock user', async () => {
    const page = await createLoggedInPage('/profile', 'una@example.com')
    expect(new URL(page.url()).pathname).toBe('/profile')
    await page.waitForSelector('h2:has-text("Una User")')
    await page.close()
  })

  it('opens a protected page as any user through the test-only login', async () => {
    const page = await createLoggedInPage('/profile', { sub: 'tess', name: 'Tess Tester' })
    expect(new URL(page.url()).pathname).toBe('/profile')
    await page.waitForSelector('h2:has-text("Tess Tester")')
    await page.close()
  })

  it('hands the browser every cookie of the session, a __Host- one included (host-only, Secure, over http)', async () => {
    const session = await loginAs({ sub: 'hana', name: 'Hana Host' })
    const probe = { name: '__Host-svc-probe', value: 'p1', path: '/', secure: true, httpOnly: true, sameSite: 'Lax' as const, expires: -1 }
    const page = await createLoggedInPage('/profile', 'hana', { session: { ...session, cookies: [...session.cookies, probe] } })
    await page.waitForSelector('h2:has-text("Hana Host")')
    expect((await page.context().cookies()).find(c => c.name === probe.name)).toMatchObject({ value: 'p1', path: '/', secure: true, httpOnly: true })
    const request = page.waitForRequest(r => new URL(r.url()).pathname === '/profile')
    await page.reload()
    expect(await (await request).headerValue('cookie')).toMatch(/(?:^|; )__Host-svc-probe=p1(?:;|$)/)
    await page.close()
  })

  it('without a session the same page sends the visitor to the login page (control)', async () => {
    const page = await createPage('/profile')
    await page.waitForURL(u => new URL(u).pathname === '/login')
    await page.close()
  })
})

describe('a production build that TEST=1 makes "for tests", outside the test runner', () => {
  const work = mkdtempSync(join(tmpdir(), 'svc-auth-nontest-'))
  afterAll(() => rmSync(work, { recursive: true, force: true }))

  it('has no test-only login: not in the output, and over HTTP its path is like any path that does not exist', async () => {
    const output = join(work, 'output')
    // What `NODE_ENV=test nuxi build` or a pipeline with TEST=1 does: nuxt.options.test is true.
    const log = await run(process.execPath, ['--input-type=module', '-e', `
      const { loadNuxt, buildNuxt } = await import('@nuxt/kit')
      const nuxt = await loadNuxt({ cwd: ${JSON.stringify(playground)}, dev: false, overrides: { buildDir: ${JSON.stringify(join(work, 'build'))}, nitro: { output: { dir: ${JSON.stringify(output)} } } } })
      console.log('nuxt.options.test=' + nuxt.options.test)
      await buildNuxt(nuxt)
      await nuxt.close()
    `], { ...process.env, NODE_ENV: 'production', TEST: '1', VITEST: '', NUXT_SVC_AUTH_TEST_LOGIN: '' })
    expect(log).toContain('nuxt.options.test=true')
    expect(existsSync(join(work, 'build', TEST_LOGIN_FILE))).toBe(false)
    expect(filesUnder(output).some(file => /test-login/.test(readFileSync(file, 'latin1')))).toBe(false)
    const port = await freePort()
    const server = spawn(process.execPath, [join(output, 'server/index.mjs')], { env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', NODE_ENV: 'production', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'memory' }, stdio: 'ignore' })
    try {
      const post = (path: string) => globalThis.fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', [TEST_LOGIN_SECRET_HEADER]: 'anything' }, body: '{"user":{"sub":"u1"}}' })
      const response = await waitFor(() => post(TEST_LOGIN_PATH))
      const absent = await post('/_svc-auth/no-such-endpoint')
      // The app's pages answer every other path (its 404 page); no endpoint answers this one.
      expect(response.status).toBe(absent.status)
      expect(response.headers.get('content-type')).toBe(absent.headers.get('content-type'))
      expect(response.headers.get('content-type')).not.toMatch(/json/)
      expect(await response.text()).not.toMatch(/"code"|not_found/)
      expect(response.headers.getSetCookie().some(line => /svc-code/.test(line))).toBe(false)
    }
    finally {
      server.kill()
    }
  }, 300_000)
})

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).map(name => join(dir, name)).filter(file => statSync(file).isFile())
}

/** Runs a command in the playground; resolves with its output. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((done, fail) => {
    let output = ''
    const child = spawn(command, args, { cwd: playground, env, stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout.on('data', (d: Buffer) => (output += d.toString()))
    child.stderr.on('data', (d: Buffer) => (output += d.toString()))
    child.on('error', fail)
    child.on('close', code => (code === 0 ? done(output) : fail(new Error(`build failed (${code}):\n${output}`))))
  })
}

function freePort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => done(port))
    })
  })
}

async function waitFor(request: () => Promise<Response>): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await request()
    }
    catch (error) {
      if (attempt > 100) throw error
      await new Promise(r => setTimeout(r, 100))
    }
  }
}
