import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import bcryptjs from 'bcryptjs'
import { decodeJwt } from 'jose'
import { $fetch } from '@nuxt/test-utils/e2e'
import { describe, expect, it } from 'vitest'
import { setupApp } from './app'
import { bearer, cookie, rememberCodeCookie } from './requests'
import { startServerProcess } from './server-processes'
import { callbackCode, codeCookieFrom, exchange, loginUser, NEW_PASSWORD, nextCode, otherCode, PASSWORD, post, registerUser, sentCodes, uniqueEmail } from './password-helpers'

const server = await setupApp('password', { NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false' })

/** The fixture's record of a user: the stored user and the handler calls made for it. */
const state = (email: string) => $fetch<{
  user: { id: string, email: string, hashedPassword: string } | null
  persistCalls: Array<{ user: Record<string, unknown>, provider: string, hasEvent: boolean }>
  successEvents: Array<{ provider: string, user: Record<string, unknown> }>
}>('/api/test/state', { query: { email } })

async function expectError(res: Response, status: number, error: string, message?: string | RegExp) {
  expect(res.status).toBe(status)
  const body = await res.json()
  expect(body).toMatchObject({ statusCode: status, error })
  expect(Object.keys(body).sort()).toEqual(['error', 'message', 'statusCode'])
  if (message) expect(body.message).toMatch(message)
  return body as { statusCode: number, message: string, error: string }
}

describe('registration', () => {
  it('register → emailed code → verify link → callback → token → /api/user/me', async () => {
    const email = uniqueEmail('reg')
    const res = await post(server, '/auth/password/register', { email, password: PASSWORD })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ success: true })
    const code = await nextCode(server, email, 'register')
    expect(code).toMatch(/^\d{6}$/)
    // Nothing is persisted before the code is verified.
    expect((await state(email)).user).toBeNull()

    const verified = await server.fetch(`/auth/password/register-verify?code=${code}`)
    expect(verified.status).toBe(302)
    const session = await exchange(server, callbackCode(verified))

    const me = await (await server.fetch('/api/user/me', bearer(session.token))).json()
    const after = await state(email)
    expect(after.user!.hashedPassword).toMatch(/^\$2b\$08\$/)
    expect(me).toMatchObject({ sub: after.user!.id, email, provider: 'password', plan: 'free', domain: 'example.com', role: 'member' })
    expect(JSON.stringify(me)).not.toContain('$2b$')
    expect(me).not.toHaveProperty('hashedPassword')

    // onUserPersist got the email and the bcrypt hash, with provider 'password' and the event.
    expect(after.persistCalls).toHaveLength(1)
    expect(after.persistCalls[0]).toMatchObject({ provider: 'password', hasEvent: true, user: { email, hashedPassword: after.user!.hashedPassword } })
    // svc:success is emitted with the persisted user (the account-linking point).
    expect(after.successEvents).toHaveLength(1)
    expect(after.successEvents[0]).toMatchObject({ provider: 'password', user: { email, id: after.user!.id, sub: after.user!.id } })

    // The hash is a standard bcrypt hash that other libraries verify.
    expect(bcryptjs.compareSync(PASSWORD, after.user!.hashedPassword)).toBe(true)
    // A code is single use.
    await expectError(await server.fetch(`/auth/password/register-verify?code=${code}`), 400, 'invalid_verification_code')
  })

  it('trims and lowercases emails before any lookup', async () => {
    const email = uniqueEmail('mixed')
    const res = await post(server, '/auth/password/register', { email: `  ${email.toUpperCase()}\t`, password: PASSWORD })
    expect(res.status).toBe(200)
    const code = await nextCode(server, email, 'register')
    await exchange(server, callbackCode(await server.fetch(`/auth/password/register-verify?code=${code}`)))
    expect((await state(email)).user?.email).toBe(email)
    // The same account, whatever the case of the address.
    await expectError(await post(server, '/auth/password/register', { email: ` ${email.replace('mixed', 'MIXED')} `, password: PASSWORD }), 400, 'user_exists')
    const session = await loginUser(server, email.toUpperCase().toLowerCase())
    expect(decodeJwt(session.token).email).toBe(email)
    const upper = await post(server, '/auth/password/login', { email: email.toUpperCase(), password: PASSWORD })
    expect(upper.status).toBe(200)
  })

  it('answers each error of the spec table', async () => {
    await expectError(await post(server, '/auth/password/register', { email: 'not-an-email', password: PASSWORD }), 400, 'invalid_email', 'Invalid email format')
    await expectError(await post(server, '/auth/password/register', { email: 'a@b', password: PASSWORD }), 400, 'invalid_email')

    const policy = await expectError(await post(server, '/auth/password/register', { email: uniqueEmail(), password: 'abc' }), 400, 'password_policy')
    expect(policy.message).toContain('at least 8 characters')
    expect(policy.message).toContain('an uppercase letter')
    expect(policy.message).toContain('a number')
    expect(policy.message).not.toContain('a lowercase letter')
    const lower = await expectError(await post(server, '/auth/password/register', { email: uniqueEmail(), password: 'ABCDEFGHIJ1' }), 400, 'password_policy')
    expect(lower.message).toContain('a lowercase letter')
    const common = await expectError(await post(server, '/auth/password/register', { email: uniqueEmail(), password: 'Password123!' }), 400, 'password_policy')
    expect(common.message).toContain('not one of the most common passwords')

    const email = uniqueEmail('exists')
    await registerUser(server, email)
    await expectError(await post(server, '/auth/password/register', { email, password: PASSWORD }), 400, 'user_exists', 'User already exists')
    expect(await sentCodes(server, email, 'register')).toHaveLength(1)
  })

  it('answers 400, never 500, for malformed bodies and queries', async () => {
    for (const body of [{}, { email: 'x@example.com' }, { password: PASSWORD }, { email: 42, password: PASSWORD }, { email: 'x@example.com', password: 'x'.repeat(2000) }, []]) {
      await expectError(await post(server, '/auth/password/register', body), 400, 'bad_request')
      await expectError(await post(server, '/auth/password/login', body), 400, 'bad_request')
    }
    const malformed = await server.fetch('/auth/password/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":' })
    await expectError(malformed, 400, 'bad_request')
    await expectError(await server.fetch('/auth/password/login-verify'), 400, 'bad_request')
    for (const code of ['', 'abc', '12345', '1234567', '12345a', encodeURIComponent('123 456')]) {
      await expectError(await server.fetch(`/auth/password/login-verify?code=${code}`), 400, 'invalid_verification_code')
    }
    await expectError(await server.fetch('/auth/password/register-verify?code=123456&email=bad'), 400, 'invalid_email')
    await expectError(await post(server, '/auth/password/reset-complete', { sessionId: 5, newPassword: NEW_PASSWORD }), 400, 'bad_request')
  })

  it('a failing delivery answers 500 "failed to send code" and leaves no usable code', async () => {
    const email = uniqueEmail('undeliverable')
    await expectError(await post(server, '/auth/password/register', { email, password: PASSWORD }), 500, 'send_failed', 'Failed to send code')
    const [sent] = await sentCodes(server, email, 'register')
    expect(sent!.code).toMatch(/^\d{6}$/)
    await expectError(await server.fetch(`/auth/password/register-verify?code=${sent!.code}`), 400, 'invalid_verification_code')
    await expectError(await post(server, '/auth/password/register-verify', { code: sent!.code, email }, { accept: 'application/json' }), 400, 'invalid_verification_code')
    expect((await state(email)).user).toBeNull()

    // Login: an existing account whose mail cannot be delivered.
    const seeded = uniqueEmail('undeliverable-login')
    await post(server, '/api/test/users', { email: seeded, hashedPassword: bcryptjs.hashSync(PASSWORD, 8) })
    await expectError(await post(server, '/auth/password/login', { email: seeded, password: PASSWORD }), 500, 'send_failed', 'Failed to send code')
    const [loginCode] = await sentCodes(server, seeded, 'login')
    await expectError(await server.fetch(`/auth/password/login-verify?code=${loginCode!.code}`), 400, 'invalid_verification_code')
    await expectError(await post(server, '/auth/password/login-verify', { code: loginCode!.code, email: seeded }, { accept: 'application/json' }), 400, 'invalid_verification_code')
  })
})

describe('login', () => {
  it('logs in with password + code and keeps the subject of the account', async () => {
    const email = uniqueEmail('login')
    const first = await registerUser(server, email)
    const again = await loginUser(server, email)
    const a = decodeJwt(first.token)
    const b = decodeJwt(again.token)
    expect(b.sub).toBe(a.sub)
    expect(b).toMatchObject({ email, provider: 'password', plan: 'free', role: 'member' })
    expect(b.sid).not.toBe(a.sid)
    expect((await server.fetch('/api/user/me', bearer(again.token))).status).toBe(200)
  })

  it('accepts hashes made by another bcrypt library', async () => {
    const email = uniqueEmail('legacy')
    await post(server, '/api/test/users', { email, hashedPassword: bcryptjs.hashSync(PASSWORD, 8).replace(/^\$2b\$/, '$2a$') })
    const session = await loginUser(server, email)
    expect(decodeJwt(session.token).email).toBe(email)
  })

  it('the host\'s hashPassword/verifyPassword utils and the provider accept each other\'s hashes', async () => {
    const utils = async (body: Record<string, unknown>) => (await post(server, '/api/test/hash-utils', body)).json() as Promise<{ hash?: string, valid?: boolean }>
    // A hash of the util (the provider's cost) is an account the provider logs in.
    const { hash } = await utils({ password: PASSWORD })
    expect(hash).toMatch(/^\$2b\$08\$/)
    const email = uniqueEmail('util')
    await post(server, '/api/test/users', { email, hashedPassword: hash })
    expect(decodeJwt((await loginUser(server, email)).token).email).toBe(email)
    // The provider's hash of a registration verifies with the util.
    const registered = uniqueEmail('util-reg')
    await registerUser(server, registered)
    const stored = (await state(registered)).user!.hashedPassword
    expect(await utils({ hash: stored, password: PASSWORD })).toEqual({ valid: true })
    expect(await utils({ hash: stored, password: NEW_PASSWORD })).toEqual({ valid: false })
    expect(await utils({ hash: null, password: PASSWORD })).toEqual({ valid: false })
    // Too long for bcrypt: the provider's policy error, an h3 error Nitro answers with its status.
    const tooLong = await post(server, '/api/test/hash-utils', { password: 'x'.repeat(73) })
    expect(tooLong.status).toBe(400)
    expect((await tooLong.json() as { message: string }).message).toMatch(/at most 72 bytes/)
  })

  it('answers one generic 400 for an unknown email and a wrong password', async () => {
    const email = uniqueEmail('generic')
    await registerUser(server, email)
    const wrong = await post(server, '/auth/password/login', { email, password: 'Wrong-password-1' })
    const unknown = await post(server, '/auth/password/login', { email: uniqueEmail('nobody'), password: PASSWORD })
    expect(wrong.status).toBe(400)
    expect(unknown.status).toBe(400)
    const a = await wrong.json()
    const b = await unknown.json()
    expect(a).toEqual({ statusCode: 400, message: 'Invalid email or password', error: 'invalid_credentials' })
    expect(b).toEqual(a)
    expect(await sentCodes(server, email, 'login')).toHaveLength(0)
  })

  it('a new code replaces the pending one', async () => {
    const email = uniqueEmail('replace')
    await registerUser(server, email)
    await post(server, '/auth/password/login', { email, password: PASSWORD })
    const first = await nextCode(server, email, 'login', 0)
    await post(server, '/auth/password/login', { email, password: PASSWORD })
    const second = await nextCode(server, email, 'login', 1)
    if (first !== second) {
      await expectError(await server.fetch(`/auth/password/login-verify?code=${first}`), 400, 'invalid_verification_code')
      await expectError(await post(server, '/auth/password/login-verify', { email, code: first }, { accept: 'application/json' }), 400, 'invalid_verification_code')
    }
    await exchange(server, callbackCode(await server.fetch(`/auth/password/login-verify?code=${second}`)))
  })

  it('50 concurrent wrong guesses count as 50 attempts; then the right code is refused too', async () => {
    const email = uniqueEmail('attempts')
    await registerUser(server, email)
    await post(server, '/auth/password/login', { email, password: PASSWORD })
    const code = await nextCode(server, email, 'login')
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      post(server, '/auth/password/login-verify', { email, code: otherCode(code, i + 1) }, { accept: 'application/json' }).then(async r => ({ status: r.status, error: (await r.json()).error as string }))))
    expect(results.every(r => r.status === 400)).toBe(true)
    // magicCodeMaxAttempts = 5: four plain failures, the fifth and every later one is over the limit.
    expect(results.filter(r => r.error === 'invalid_verification_code')).toHaveLength(4)
    expect(results.filter(r => r.error === 'too_many_attempts')).toHaveLength(46)
    await expectError(await post(server, '/auth/password/login-verify', { email, code }, { accept: 'application/json' }), 400, 'too_many_attempts', 'Maximum attempts exceeded')
    await expectError(await server.fetch(`/auth/password/login-verify?code=${code}`), 400, 'too_many_attempts')
    // A new code starts afresh.
    await loginUser(server, email)
  })

  it('POST verify: a form post gets the redirect, a JSON client gets { success, redirect }', async () => {
    const email = uniqueEmail('post')
    await registerUser(server, email)
    await post(server, '/auth/password/login', { email, password: PASSWORD })
    const formCode = await nextCode(server, email, 'login', 0)
    const form = await server.fetch('/auth/password/login-verify', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'accept': 'text/html' },
      body: new URLSearchParams({ code: formCode, email: email.toUpperCase() }).toString(),
    })
    await exchange(server, callbackCode(form))

    await post(server, '/auth/password/login', { email, password: PASSWORD })
    const jsonCode = await nextCode(server, email, 'login', 1)
    const res = await post(server, '/auth/password/login-verify', { code: jsonCode }, { accept: 'application/json' })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toMatchObject({ success: true })
    const code = /^\/auth\/callback\?code=([\w-]+)$/.exec(body.redirect)![1]!
    await exchange(server, rememberCodeCookie(res, code))
  })

  it('refuses POSTs from other origins', async () => {
    const email = uniqueEmail('xsite')
    await registerUser(server, email)
    const variants: Array<Record<string, string>> = [{ 'sec-fetch-site': 'cross-site' }, { origin: 'https://evil.example' }, { 'origin': 'https://sibling.example.com', 'sec-fetch-site': 'same-site' }]
    for (const headers of variants) {
      await expectError(await post(server, '/auth/password/login', { email, password: PASSWORD }, headers), 403, 'cross_origin_request')
      await expectError(await post(server, '/auth/password/register', { email: uniqueEmail(), password: PASSWORD }, headers), 403, 'cross_origin_request')
      await expectError(await post(server, '/auth/password/login-verify', { code: '123456' }, headers), 403, 'cross_origin_request')
      await expectError(await post(server, '/auth/password/reset-request', { email }, headers), 403, 'cross_origin_request')
    }
    expect((await post(server, '/auth/password/login', { email, password: PASSWORD }, { origin: server.url })).status).toBe(200)
  })
})

describe('password reset', () => {
  it('answers the same for known and unknown emails and sends a code only to the account', async () => {
    const email = uniqueEmail('reset-known')
    const unknownEmail = uniqueEmail('reset-unknown')
    await registerUser(server, email)
    const known = await post(server, '/auth/password/reset-request', { email })
    const unknown = await post(server, '/auth/password/reset-request', { email: unknownEmail })
    expect(known.status).toBe(200)
    expect(unknown.status).toBe(200)
    const a = await known.json()
    expect(a).toMatchObject({ success: true, message: expect.any(String) })
    expect(await unknown.json()).toEqual(a)
    await nextCode(server, email, 'reset')
    await new Promise(r => setTimeout(r, 100))
    expect(await sentCodes(server, unknownEmail, 'reset')).toHaveLength(0)
    await expectError(await post(server, '/auth/password/reset-request', { email: 'nope' }), 400, 'invalid_email')
  })

  it('reset → verify → reset-complete sets the new password and revokes every session', async () => {
    const email = uniqueEmail('reset')
    const one = await registerUser(server, email)
    const two = await loginUser(server, email)
    expect((await server.fetch('/auth/refresh', cookie(one.refreshCookie))).status).toBe(200)

    await post(server, '/auth/password/reset-request', { email })
    const code = await nextCode(server, email, 'reset')
    const verified = await server.fetch(`/auth/password/reset-verify?code=${code}`)
    expect(verified.status).toBe(302)
    const location = verified.headers.get('location')!
    const match = /^\/reset-password\?session=([\w-]{40,})$/.exec(location)
    expect(match).not.toBeNull()
    const sessionId = match![1]!
    // The reset session is bound to this browser, like an authorization code.
    const browser = { cookie: codeCookieFrom(verified) }
    expect(browser.cookie).toMatch(/^__Host-svc-code=[\w-]{43}$/)
    await expectError(await server.fetch(`/auth/password/reset-verify?code=${code}`), 400, 'invalid_verification_code')

    // A password refused by the policy leaves the session usable.
    const weak = await expectError(await post(server, '/auth/password/reset-complete', { sessionId, newPassword: 'weak' }, browser), 400, 'password_policy')
    expect(weak.message).toContain('at least 8 characters')
    const done = await post(server, '/auth/password/reset-complete', { sessionId, newPassword: NEW_PASSWORD }, browser)
    expect(done.status).toBe(200)
    expect(await done.json()).toEqual({ success: true })
    // Single use.
    await expectError(await post(server, '/auth/password/reset-complete', { sessionId, newPassword: NEW_PASSWORD }, browser), 400, 'invalid_reset_session', 'Invalid or expired reset session')
    await expectError(await post(server, '/auth/password/reset-complete', { sessionId: 'unknown-session', newPassword: NEW_PASSWORD }, browser), 400, 'invalid_reset_session')

    // Persisted through onUserPersist; every refresh token is revoked.
    const after = await state(email)
    expect(bcryptjs.compareSync(NEW_PASSWORD, after.user!.hashedPassword)).toBe(true)
    expect(after.persistCalls.at(-1)).toMatchObject({ provider: 'password', user: { email, hashedPassword: after.user!.hashedPassword } })
    for (const session of [one, two]) {
      await expectError(await server.fetch('/auth/refresh', cookie(session.refreshCookie)), 401, 'invalid_refresh_token')
    }
    await expectError(await post(server, '/auth/password/login', { email, password: PASSWORD }), 400, 'invalid_credentials')
    await loginUser(server, email, NEW_PASSWORD)
  })

  it('reset-verify by POST answers the session id to JSON clients', async () => {
    const email = uniqueEmail('reset-post')
    await registerUser(server, email)
    await post(server, '/auth/password/reset-request', { email })
    const code = await nextCode(server, email, 'reset')
    const res = await post(server, '/auth/password/reset-verify', { code, email }, { accept: 'application/json' })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.redirect).toBe(`/reset-password?session=${body.sessionId}`)
    // Another browser (no code cookie) cannot use the session, and burns it.
    await expectError(await post(server, '/auth/password/reset-complete', { sessionId: body.sessionId, newPassword: NEW_PASSWORD }), 400, 'invalid_reset_session')
    await post(server, '/auth/password/reset-request', { email })
    const again = await nextCode(server, email, 'reset', 1)
    const fresh = await post(server, '/auth/password/reset-verify', { code: again, email }, { accept: 'application/json' })
    const { sessionId } = await fresh.json()
    expect((await post(server, '/auth/password/reset-complete', { sessionId, newPassword: NEW_PASSWORD }, { cookie: codeCookieFrom(fresh) })).status).toBe(200)
  })
})

describe('password change', () => {
  it('needs a bearer token', async () => {
    await expectError(await post(server, '/auth/password/change', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }), 401, 'unauthorized')
    await expectError(await post(server, '/auth/password/change', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }, { authorization: 'Bearer garbage' }), 401, 'unauthorized')
  })

  it('checks the current password and the policy, then keeps only the current session', async () => {
    const email = uniqueEmail('change')
    const other = await registerUser(server, email)
    const current = await loginUser(server, email)
    const auth = { authorization: `Bearer ${current.token}` }

    await expectError(await post(server, '/auth/password/change', { currentPassword: 'Wrong-password-1', newPassword: NEW_PASSWORD }, auth), 400, 'current_password_incorrect', 'Current password is incorrect')
    const weak = await expectError(await post(server, '/auth/password/change', { currentPassword: PASSWORD, newPassword: 'alllowercase' }, auth), 400, 'password_policy')
    expect(weak.message).toContain('an uppercase letter')
    expect(weak.message).toContain('a number')
    await expectError(await post(server, '/auth/password/change', { currentPassword: PASSWORD }, auth), 400, 'bad_request')

    const res = await post(server, '/auth/password/change', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }, auth)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ success: true })

    // The current session stays; the other one is revoked.
    expect((await server.fetch('/api/user/me', bearer(current.token))).status).toBe(200)
    expect((await server.fetch('/auth/refresh', cookie(current.refreshCookie))).status).toBe(200)
    await expectError(await server.fetch('/auth/refresh', cookie(other.refreshCookie)), 401, 'invalid_refresh_token')

    const after = await state(email)
    expect(after.persistCalls.at(-1)).toMatchObject({ provider: 'password', user: { email, hashedPassword: after.user!.hashedPassword } })
    await expectError(await post(server, '/auth/password/login', { email, password: PASSWORD }), 400, 'invalid_credentials')
    await loginUser(server, email, NEW_PASSWORD)
  })
})

describe('stored records', () => {
  it('never keep the password hash next to a session', async () => {
    const fsServer = await startServerProcess({ NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'fs' }, 'password')
    try {
      const email = uniqueEmail('stored')
      await registerUser(fsServer, email)
      await loginUser(fsServer, email)
      const files: string[] = []
      const walk = (dir: string) => {
        for (const name of readdirSync(dir)) {
          const path = join(dir, name)
          if (statSync(path).isDirectory()) walk(path)
          else files.push(path)
        }
      }
      walk(fsServer.dataDir)
      const contents = files.map(f => readFileSync(f, 'utf8'))
      // The refresh records hold the user (with its email) but no hash.
      expect(contents.some(c => c.includes(email))).toBe(true)
      for (const content of contents) expect(content).not.toMatch(/\$2[aby]\$|hashedPassword/)
    }
    finally {
      await fsServer.stop()
    }
  })
})
