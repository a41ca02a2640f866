import { Agent } from 'node:http'
import { describe, expect, it } from 'vitest'
import { restartApp, setupApp, type TestApp } from './app'
import { bearer, chunkedPost, codeCookieOf, rawPost } from './requests'
import { callbackCode, exchange, loginUser, nextCode, otherCode, PASSWORD, post, registerUser, sentCodes, uniqueEmail } from './password-helpers'

// Every test starts the server afresh (its own limits and counters).
await setupApp('password', { NUXT_SVC_AUTH_RATE_LIMIT_TRUSTED_PROXIES: '["127.0.0.1", "::1"]' }, { server: false })

/** The server of this file, started again with `env` (and fresh counters). */
const start = (env: Record<string, string> = {}): Promise<TestApp> => restartApp(env)

const errorOf = async (res: Response) => ((await res.json()) as { error?: string }).error

describe('verify links carry a flow id; code-only verification draws on a global budget', () => {
  it('the delivery handler gets a ready link with the code and a flow id, and the link logs in', async () => {
    const server = await start()
    const email = uniqueEmail('link')
    await registerUser(server, email)
    expect((await post(server, '/auth/password/login', { email, password: PASSWORD })).status).toBe(200)
    const [sent] = (await sentCodes(server, email, 'login')).slice(-1)
    expect(sent!.link).toMatch(/^\/auth\/password\/login-verify\?code=\d{6}&flow=[\w-]{22}$/)
    expect(sent!.link).toContain(`code=${sent!.code}`)
    expect(sent!.link).not.toContain(encodeURIComponent(email))
    const res = await server.fetch(sent!.link!)
    const code = callbackCode(res)
    expect(codeCookieOf(code)).toMatch(/^__Host-svc-code=/)
    await exchange(server, code)
  })

  it('100 wrong code-only guesses from 5 addresses: 25 are evaluated, then 429; the right link still works', async () => {
    const server = await start({ NUXT_SVC_AUTH_RATE_LIMIT_VERIFY_PER_IP: '1000' })
    const email = uniqueEmail('lottery')
    await registerUser(server, email)
    await post(server, '/auth/password/login', { email, password: PASSWORD })
    const [sent] = (await sentCodes(server, email, 'login')).slice(-1)
    const statuses: number[] = []
    for (let i = 1; i <= 100; i++) {
      const res = await server.fetch(`/auth/password/login-verify?code=${otherCode(sent!.code, i)}`, { headers: { 'x-forwarded-for': `198.51.100.${i % 5}` } })
      statuses.push(res.status)
    }
    expect(statuses.filter(s => s === 400)).toHaveLength(25)
    expect(statuses.filter(s => s === 429)).toHaveLength(75)
    // Code-only verification is paused for the action, even for the right code...
    const codeOnly = await server.fetch(`/auth/password/login-verify?code=${sent!.code}`)
    expect(codeOnly.status).toBe(429)
    expect(await errorOf(codeOnly)).toBe('rate_limited')
    expect(Number(codeOnly.headers.get('retry-after'))).toBeGreaterThan(3500)
    // ...while the link with its flow id (or the email) keeps working, and other actions too.
    await exchange(server, callbackCode(await server.fetch(sent!.link!)))
    const other = uniqueEmail('other-action')
    await post(server, '/auth/password/register', { email: other, password: PASSWORD })
    const registerCode = await nextCode(server, other, 'register')
    await exchange(server, callbackCode(await server.fetch(`/auth/password/register-verify?code=${registerCode}`)))
  })
})

describe('login failures are counted per email and address, with a looser ceiling per email', () => {
  it('a stranger who fails from other addresses does not lock the owner out of their own address', async () => {
    const server = await start({ NUXT_SVC_AUTH_RATE_LIMIT_LOGIN_PER_EMAIL: '12' })
    const email = uniqueEmail('owner')
    await registerUser(server, email)
    const attempt = (password: string, address: string) => post(server, '/auth/password/login', { email, password }, { 'x-forwarded-for': address })
    for (let i = 0; i < 5; i++) expect((await attempt('Wrong-password-1', '203.0.113.66')).status).toBe(400)
    // The 6th failure from that address is not even evaluated.
    expect((await attempt(PASSWORD, '203.0.113.66')).status).toBe(429)
    // The owner, from home, logs in; a right password does not count as a failure.
    for (let i = 0; i < 3; i++) expect((await attempt(PASSWORD, '192.0.2.10')).status).toBe(200)
    // The stranger moves on: another 5 from a second address, then the per-email ceiling (12) holds.
    for (let i = 0; i < 5; i++) expect((await attempt('Wrong-password-1', '203.0.113.67')).status).toBe(400)
    expect((await attempt('Wrong-password-1', '203.0.113.68')).status).toBe(400)
    expect((await attempt('Wrong-password-1', '203.0.113.68')).status).toBe(400)
    expect((await attempt(PASSWORD, '192.0.2.10')).status).toBe(429)
  })

  it('IPv6 clients are counted per /64', async () => {
    const server = await start({ NUXT_SVC_AUTH_RATE_LIMIT_LOGIN_PER_IP: '3' })
    const login = (address: string) => post(server, '/auth/password/login', { email: uniqueEmail(), password: 'Wrong-password-1' }, { 'x-forwarded-for': address })
    for (const address of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff:ffff:ffff:ffff']) expect((await login(address)).status).toBe(400)
    expect((await login('2001:db8:1:2:abcd::9')).status).toBe(429)
    expect((await login('2001:db8:1:3::1')).status).toBe(400)
  })
})

describe('passwords', () => {
  it('are compared in Unicode NFC: a password typed in NFD logs in to an account registered in NFC', async () => {
    const server = await start()
    const email = uniqueEmail('nfc')
    const nfc = 'Crème-brûlée-42'.normalize('NFC')
    const nfd = nfc.normalize('NFD')
    expect(nfd).not.toBe(nfc)
    await registerUser(server, email, nfc)
    await loginUser(server, email, nfd)
    await loginUser(server, email, nfc)
  })

  it('register accepts exactly 72 bytes; login, change and reset refuse longer ones like a wrong password', async () => {
    const server = await start()
    const email = uniqueEmail('bcrypt72')
    const password = `Aa1-${'x'.repeat(68)}`
    expect(Buffer.byteLength(password)).toBe(72)
    const tooLong = await post(server, '/auth/password/register', { email: uniqueEmail(), password: `${password}y` })
    expect(tooLong.status).toBe(400)
    expect(await tooLong.json()).toMatchObject({ error: 'password_policy', message: expect.stringContaining('at most 72 bytes') })
    const session = await registerUser(server, email, password)
    // bcrypt would ignore everything past byte 72: such a password must not log in.
    const suffixed = await post(server, '/auth/password/login', { email, password: `${password}anything` })
    expect(suffixed.status).toBe(400)
    expect(await suffixed.json()).toEqual({ statusCode: 400, message: 'Invalid email or password', error: 'invalid_credentials' })
    const change = await post(server, '/auth/password/change', { currentPassword: `${password}anything`, newPassword: 'Marigold-77y' }, bearer(session.token).headers as Record<string, string>)
    expect(change.status).toBe(400)
    expect(await errorOf(change)).toBe('current_password_incorrect')
    await loginUser(server, email, password)
  })
})

describe('request bodies', () => {
  it('a 100 MB body to reset-request is refused with 413 before it is read, declared or chunked', async () => {
    const server = await start()
    const declared = await rawPost(server, '/auth/password/reset-request', { declaredLength: 100 * 1024 * 1024 })
    expect(declared.status).toBe(413)
    const chunked = await rawPost(server, '/auth/password/reset-request', { chunkedBytes: 100 * 1024 * 1024 })
    expect(chunked.status).toBe(413)
    expect(JSON.parse(chunked.body)).toEqual({ statusCode: 413, message: 'Request body is larger than 16384 bytes', error: 'payload_too_large' })
    expect(chunked.sent).toBeLessThan(50 * 1024 * 1024)
    for (const path of ['/auth/password/login', '/auth/password/register', '/auth/password/login-verify', '/auth/password/reset-complete']) {
      expect((await rawPost(server, path, { chunkedBytes: 1024 * 1024 })).status, path).toBe(413)
    }
  })
})

describe('a refused body: the client reads the 413 (lingering close)', () => {
  it('20 rounds of 1 MB chunked bodies to login and reset-complete, most with Connection: close: each gets the 413, none a reset', async () => {
    const server = await start()
    const keepAlive = new Agent({ keepAlive: true })
    try {
      const outcomes: string[] = []
      for (let round = 0; round < 20; round++) {
        for (const path of ['/auth/password/login', '/auth/password/reset-complete']) {
          const result = await chunkedPost(server, path, 1024 * 1024, round % 4 === 3 ? keepAlive : false)
          outcomes.push(`${path}: ${result.error ?? result.status}`)
          if (result.status === 413) expect(JSON.parse(result.body!)).toEqual({ statusCode: 413, message: 'Request body is larger than 16384 bytes', error: 'payload_too_large' })
          await new Promise(r => setTimeout(r, 10))
        }
      }
      expect(outcomes.filter(outcome => !outcome.endsWith(': 413'))).toEqual([])
    }
    finally {
      keepAlive.destroy()
    }
  })
})

describe('emails with internationalised domains', () => {
  it('are accepted and compared in one canonical form', async () => {
    const server = await start()
    const local = `idn-${Date.now().toString(36)}`
    expect((await post(server, '/auth/password/register', { email: `${local}@BÜCHER.de`, password: PASSWORD })).status).toBe(200)
    const [sent] = await sentCodes(server, `${local}@xn--bcher-kva.de`, 'register')
    expect(sent?.email).toBe(`${local}@xn--bcher-kva.de`)
    await exchange(server, callbackCode(await server.fetch(sent!.link!)))
    const login = await post(server, '/auth/password/login', { email: `${local}@bücher.de`.toUpperCase(), password: PASSWORD })
    expect(login.status).toBe(200)
    const code = await nextCode(server, `${local}@xn--bcher-kva.de`, 'login')
    await exchange(server, callbackCode(await server.fetch(`/auth/password/login-verify?code=${code}`)))
    expect((await sentCodes(server, `${local}@xn--bcher-kva.de`, 'login')).length).toBe(1)
    const duplicate = await post(server, '/auth/password/register', { email: `${local}@BÜCHER.de`, password: PASSWORD })
    expect(await errorOf(duplicate)).toBe('user_exists')
  })
})
