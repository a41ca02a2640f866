import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Secret, TOTP } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPage } from '@nuxt/test-utils/e2e'
import { setupApp } from './app'
import { fixtureOutput } from './fixtures'
import { jsonClient, ok, type JsonClient } from './json-client'
import type { Server } from './requests'
import { startServerProcess, type ServerProcess } from './server-processes'

// The second factor on the built client fixture (twoFactor.enabled, password and mock providers):
// over HTTP for both providers, then through the pages in Chromium.
const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
if (!existsSync(executablePath)) throw new Error(`Chromium not found at ${executablePath}: apt-get install -y chromium, or set CHROMIUM_PATH`)
const server = await setupApp('client', { NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false' }, { browser: true, browserOptions: { type: 'chromium', launch: { executablePath, args: CHROMIUM_ARGS } } })

const PASSWORD = 'Sunflower-42x'
const PERIOD_MS = 30_000
const totp = (secret: string, offset = 0) => new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + offset * PERIOD_MS })

type Client = JsonClient

const query = (location: string, name: string) => new URL(location, server.url).searchParams.get(name)!

async function exchange(c: Client, location: string): Promise<string> {
  expect(location).toMatch(/^\/auth\/callback\?code=/)
  return (await ok<{ accessToken: string }>(await c.post('/auth/token', { code: query(location, 'code') }))).accessToken
}

async function emailedCode(email: string, action: string, at: Server = server): Promise<string> {
  const { code } = await ok<{ code: string }>(await at.fetch(`/api/test/codes?email=${encodeURIComponent(email)}&action=${action}`))
  return code
}

/** Password login's first factor: where the login goes next. */
async function passwordFirstFactor(c: Client, email: string, at: Server = server): Promise<string> {
  await ok(await c.post('/auth/password/login', { email, password: PASSWORD }))
  return (await ok<{ redirect: string }>(await c.post('/auth/password/login-verify', { email, code: await emailedCode(email, 'login', at) }))).redirect
}

/** A new password account, logged in: its access token. */
async function registered(c: Client, email: string, at: Server = server): Promise<string> {
  await ok(await c.post('/auth/password/register', { email, password: PASSWORD }))
  return exchange(c, (await ok<{ redirect: string }>(await c.post('/auth/password/register-verify', { email, code: await emailedCode(email, 'register', at) }))).redirect)
}

/** The mock provider's login: where the browser goes after the provider. */
async function mockFirstFactor(c: Client): Promise<string> {
  const start = await c.get('/auth/mock')
  const atProvider = await c.get(start.headers.get('location')!)
  const back = await c.get(atProvider.headers.get('location')!)
  expect(back.status).toBe(302)
  return back.headers.get('location')!
}

/** Enrols the user of `token`: the secret, confirmed with the previous step's code. */
async function enrol(token: string, at: Server = server): Promise<{ secret: string, recoveryCodes: string[] }> {
  const c = jsonClient(at)
  const { secret } = await ok<{ secret: string }>(await c.post('/auth/two-factor/enrol', {}, token))
  const { recoveryCodes } = await ok<{ recoveryCodes: string[] }>(await c.post('/auth/two-factor/confirm', { code: totp(secret, -1) }, token))
  return { secret, recoveryCodes }
}

const secretsSeen: string[] = []

describe('second factor over HTTP', () => {
  it('a password login asks for the code once the user enrolled', async () => {
    const email = `tf-${Date.now()}@example.com`
    const c = jsonClient(server)
    const token = await registered(c, email)
    const { secret, recoveryCodes } = await enrol(token)
    secretsSeen.push(secret, ...recoveryCodes)
    expect(await ok(await c.get('/auth/two-factor/status', token))).toEqual({ enabled: true, recoveryCodesLeft: 10 })

    const b = jsonClient(server)
    const location = await passwordFirstFactor(b, email)
    expect(location).toMatch(/^\/auth\/second-factor\?flow=[\w-]+$/)
    // Another client holding the flow id gets nothing (and burns it).
    expect((await ok<{ error: string }>(await jsonClient(server).post('/auth/two-factor/verify', { flow: query(location, 'flow'), code: totp(secret) }), 401)).error).toBe('code_binding_mismatch')
    const again = await passwordFirstFactor(b, email)
    const done = await ok<{ redirect: string }>(await b.post('/auth/two-factor/verify', { flow: query(again, 'flow'), code: totp(secret) }))
    const session = await exchange(b, done.redirect)
    expect((await ok<{ sub: string }>(await b.get('/api/user/me', session))).sub).toBe(`pw-${email}`)

    // A recovery code, once.
    const third = await passwordFirstFactor(jsonClient(server), email)
    const rc = jsonClient(server)
    const fourth = await passwordFirstFactor(rc, email)
    await ok(await rc.post('/auth/two-factor/verify', { flow: query(fourth, 'flow'), recoveryCode: recoveryCodes[0] }))
    expect(third).not.toBe(fourth)
  })

  it('a mock OAuth login asks for the code too, and completes with it', async () => {
    const c = jsonClient(server)
    const first = await mockFirstFactor(c)
    const token = await exchange(c, first)
    const { secret, recoveryCodes } = await enrol(token)
    secretsSeen.push(secret, ...recoveryCodes)
    const b = jsonClient(server)
    const location = await mockFirstFactor(b)
    expect(location).toMatch(/^\/auth\/second-factor\?flow=/)
    const done = await ok<{ redirect: string }>(await b.post('/auth/two-factor/verify', { flow: query(location, 'flow'), code: totp(secret) }))
    const session = await exchange(b, done.redirect)
    expect((await ok<{ sub: string }>(await b.get('/api/user/me', session))).sub).toBe('mock:carol')
    // Disabled again (with a code), so the browser test enrols carol afresh.
    await ok(await b.post('/auth/two-factor/disable', { code: totp(secret, 1) }, session))
    expect((await mockFirstFactor(jsonClient(server)))).toMatch(/^\/auth\/callback\?code=/)
  })

  it('keeps the TOTP secret and the recovery codes out of the client bundle and the server log', () => {
    expect(secretsSeen.length).toBeGreaterThan(10)
    const dir = join(fixtureOutput('client'), 'public')
    const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter(f => f.isFile()).map(f => readFileSync(join(f.parentPath, f.name), 'utf8'))
    const bundle = files.join('\n')
    // otpauth and the server's code never reach the browser.
    expect(bundle).not.toMatch(/Missing HMAC function|two-factor-secret|createCipheriv/)
    for (const secret of secretsSeen) {
      expect(bundle).not.toContain(secret)
      expect(server.output()).not.toContain(secret)
    }
  })
})

describe('second factor and a session that logged in too long ago', () => {
  // One more process of the fixture whose recent-login window is short.
  const RECENT_LOGIN_SECONDS = 10
  let short: ServerProcess
  beforeAll(async () => {
    short = await startServerProcess({ NUXT_SVC_AUTH_SESSIONS_RECENT_LOGIN: `${RECENT_LOGIN_SECONDS}s`, NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false' }, 'client')
  })
  afterAll(() => short?.stop())

  it('cannot turn it off, make new recovery codes or confirm an enrolment; a fresh login can', async () => {
    const email = `tf-stale-${Date.now()}@example.com`
    const c = jsonClient(short)
    const loggedInAt = Date.now()
    const token = await registered(c, email, short)
    const { secret } = await enrol(token, short)
    const other = await registered(c, `tf-stale-other-${Date.now()}@example.com`, short)
    const pending = await ok<{ secret: string }>(await c.post('/auth/two-factor/enrol', {}, other))
    // Generous margins: the first steps must have run within the window (else this test proves
    // nothing), and the refusals come well after it.
    expect(Date.now() - loggedInAt).toBeLessThan(RECENT_LOGIN_SECONDS * 1000 / 2)
    await new Promise(resolve => setTimeout(resolve, loggedInAt + (RECENT_LOGIN_SECONDS + 2) * 1000 - Date.now()))

    const refused = async (res: Response) => expect((await ok<{ error: string }>(res, 403)).error).toBe('reauthentication_required')
    await refused(await c.post('/auth/two-factor/disable', { password: PASSWORD }, token))
    await refused(await c.post('/auth/two-factor/disable', { code: totp(secret) }, token))
    await refused(await c.post('/auth/two-factor/recovery-codes', { code: totp(secret) }, token))
    await refused(await c.post('/auth/two-factor/confirm', { code: totp(pending.secret) }, other))
    expect(await ok(await c.get('/auth/two-factor/status', token))).toEqual({ enabled: true, recoveryCodesLeft: 10 })
    expect(await ok(await c.get('/auth/two-factor/status', other))).toEqual({ enabled: false, recoveryCodesLeft: 0 })

    // A password login still asks for the second factor; the fresh session it ends in may change it.
    const b = jsonClient(short)
    const location = await passwordFirstFactor(b, email, short)
    expect(location).toMatch(/^\/auth\/second-factor\?flow=/)
    const done = await ok<{ redirect: string }>(await b.post('/auth/two-factor/verify', { flow: query(location, 'flow'), code: totp(secret) }))
    const fresh = await exchange(b, done.redirect)
    await ok(await b.post('/auth/two-factor/recovery-codes', { code: totp(secret, 1) }, fresh))
    await ok(await b.post('/auth/two-factor/disable', { password: PASSWORD }, fresh))
    expect(await passwordFirstFactor(jsonClient(short), email, short)).toMatch(/^\/auth\/callback\?code=/)
  })
})

describe('second factor in the browser', () => {
  it('the mock login stops at the second-factor page; a code from the app logs the user in', async () => {
    const c = jsonClient(server)
    const token = await exchange(c, await mockFirstFactor(c))
    const { secret } = await enrol(token)

    const page = await createPage()
    await page.goto(`${server.url}/auth/mock`)
    await page.waitForURL(/\/auth\/second-factor\?flow=/)
    await page.waitForSelector('html[data-hydrated]')
    await page.getByTestId('code').fill('000000')
    await page.getByTestId('submit').click()
    await expect.poll(() => page.getByTestId('error').textContent()).toContain('Invalid two-factor code')
    await page.getByTestId('code').fill(totp(secret))
    await page.getByTestId('submit').click()
    await page.waitForURL(/\/dashboard$/)
    await expect.poll(() => page.getByTestId('signed-in').textContent()).toContain('Carol Mock')
    await page.close()
  })

  it('a password login through usePassword() stops at the second-factor page, then lands on the page chosen before it', async () => {
    const email = `tf-browser-${Date.now()}@example.com`
    const { secret } = await enrol(await registered(jsonClient(server), email))

    const page = await createPage()
    await page.goto(`${server.url}/password?redirect=${encodeURIComponent('/sessions')}`)
    await page.waitForSelector('html[data-hydrated]')
    await page.getByTestId('pw-email').fill(email)
    await page.getByTestId('pw-password').fill(PASSWORD)
    await page.getByTestId('pw-login').click()
    await page.getByTestId('pending').waitFor()
    await page.getByTestId('pw-code').fill(await emailedCode(email, 'login'))
    await page.getByTestId('pw-verify').click()
    await page.waitForURL(/\/auth\/second-factor\?flow=/)
    await page.getByTestId('code').fill(totp(secret))
    await page.getByTestId('submit').click()
    await page.waitForURL(/\/sessions$/)
    await page.getByTestId('signed-in').waitFor()
    await page.close()
  })
})
