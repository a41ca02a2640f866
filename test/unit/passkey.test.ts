import { verifyAuthenticationResponse, type PublicKeyCredentialCreationOptionsJSON, type PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import { isoCBOR } from '@simplewebauthn/server/helpers'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { decoyCredentials } from '../../src/runtime/passkey/server/passkey-login'
import { consumeAuthCode } from '../../src/runtime/server/lib/core/records/auth-code'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { passkeyCreationOptionsResponse, passkeyListResponse, passkeyLoginResponse, passkeyRegisteredResponse, passkeyRequestOptionsResponse } from '../../src/runtime/server/lib/edge/response-schemas'
import { SoftAuthenticator } from './helpers/webauthn'
import { unitContext } from './helpers/context'
import { HOST_HANDLERS, startPasskeyApp, TestBrowser, type PasskeyTestApp } from './helpers/passkey-app'

// The library's assertion check, watched: which key each login verified against.
vi.mock('@simplewebauthn/server', async (importOriginal) => {
  const original = await importOriginal<typeof import('@simplewebauthn/server')>()
  return { ...original, verifyAuthenticationResponse: vi.fn(original.verifyAuthenticationResponse) }
})

const ORIGIN = 'https://app.example.com'
const RP_ID = 'app.example.com'
const P = '/auth/passkey'

let app: PasskeyTestApp
let n = 0

beforeAll(async () => {
  // Security events are logged (to nowhere: the level is silent), so tests can watch `logger.security`.
  app = await startPasskeyApp({ logging: { level: 'silent', security: true } })
})
afterAll(async () => {
  await app?.close()
  resetAuthHandlers()
})
afterEach(() => {
  vi.restoreAllMocks()
})

/** A new user with a logged-in browser (bearer token of their own). */
async function newUser(): Promise<{ id: string, email: string, browser: TestBrowser }> {
  const id = `user-${++n}`
  const email = `${id}@example.com`
  app.host.users.set(email, { id, email, name: `User ${n}` })
  const { token } = await app.ctx.tokens.sign({ sub: id, email, name: `User ${n}` })
  return { id, email, browser: new TestBrowser(app.base, token) }
}

async function registerOptions(browser: TestBrowser): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const answer = await browser.post<PublicKeyCredentialCreationOptionsJSON>(`${P}/register/options`)
  expect(answer.status).toBe(200)
  return passkeyCreationOptionsResponse.parse(answer.body) as unknown as PublicKeyCredentialCreationOptionsJSON
}

/** A user with one registered passkey. */
async function userWithPasskey(): Promise<{ id: string, email: string, browser: TestBrowser, authenticator: SoftAuthenticator }> {
  const user = await newUser()
  const authenticator = new SoftAuthenticator({ origin: ORIGIN, rpID: RP_ID })
  const answer = await user.browser.post(`${P}/register/verify`, { response: authenticator.register(await registerOptions(user.browser)), name: 'Laptop' })
  expect(answer.status).toBe(200)
  return { ...user, authenticator }
}

/** A logged-out browser that asked for login options. */
async function loginOptions(body: Record<string, unknown> = {}): Promise<{ browser: TestBrowser, options: PublicKeyCredentialRequestOptionsJSON }> {
  const browser = new TestBrowser(app.base)
  const answer = await browser.post(`${P}/login/options`, body)
  expect(answer.status).toBe(200)
  return { browser, options: passkeyRequestOptionsResponse.parse(answer.body) as unknown as PublicKeyCredentialRequestOptionsJSON }
}

describe('passkey registration', () => {
  it('registers a passkey: options bound to the user, attestation verified, stored by the host, hook run', async () => {
    const user = await newUser()
    const options = await registerOptions(user.browser)
    expect(options.rp).toEqual({ id: RP_ID, name: RP_ID })
    expect(options.user.name).toBe(user.email)
    expect(options.excludeCredentials).toEqual([])
    expect(options.authenticatorSelection).toMatchObject({ residentKey: 'preferred', userVerification: 'preferred' })
    const authenticator = new SoftAuthenticator({ origin: ORIGIN, rpID: RP_ID })
    const answer = await user.browser.post(`${P}/register/verify`, { response: authenticator.register(options), name: '  My laptop  ' })
    expect(answer.status).toBe(200)
    const { credential } = passkeyRegisteredResponse.parse(answer.body)
    expect(credential).toMatchObject({ id: authenticator.id, name: 'My laptop', deviceType: 'singleDevice', backedUp: false, transports: ['internal', 'hybrid'] })
    const stored = app.host.credentials.get(authenticator.id)!
    expect(stored).toMatchObject({ userId: user.id, counter: 0, name: 'My laptop' })
    expect(Buffer.from(stored.publicKey, 'base64url')).toEqual(Buffer.from(authenticator.cosePublicKey()))
    const hook = app.hooks.find(h => h.name === 'svc:passkey:registered' && (h.payload as { userId: string }).userId === user.id)
    expect(hook?.payload).toMatchObject({ userId: user.id, credential: { id: authenticator.id }, userVerified: true })
    // The next options exclude it, and the user's list shows it.
    expect((await registerOptions(user.browser)).excludeCredentials).toEqual([{ id: authenticator.id, type: 'public-key', transports: ['internal', 'hybrid'] }])
    const list = passkeyListResponse.parse((await user.browser.request('GET', `${P}/credentials`)).body)
    expect(list.credentials.map(c => c.id)).toEqual([authenticator.id])
  })

  it('refuses an answer to another challenge, origin or relying party', async () => {
    const user = await newUser()
    const authenticator = new SoftAuthenticator({ origin: ORIGIN, rpID: RP_ID })
    const cases = [
      [{ challenge: Buffer.alloc(32, 7).toString('base64url') }, 'invalid_passkey_challenge'],
      [{ origin: 'https://evil.example' }, 'invalid_passkey'],
      [{ rpID: 'evil.example' }, 'invalid_passkey'],
      [{ userVerified: false }, undefined],
    ] as const
    for (const [override, code] of cases) {
      const answer = await user.browser.post(`${P}/register/verify`, { response: authenticator.register(await registerOptions(user.browser), override) })
      if (code === undefined) {
        // userVerification 'preferred': a passkey created without user verification is accepted.
        expect(answer.status).toBe(200)
        continue
      }
      expect(answer, JSON.stringify(override)).toMatchObject({ status: 400, body: { statusCode: 400, error: code } })
    }
    expect([...app.host.credentials.values()].filter(c => c.userId === user.id)).toHaveLength(1)
  })

  it('uses a challenge once: a replayed answer is refused, and so is the same passkey twice', async () => {
    const user = await newUser()
    const authenticator = new SoftAuthenticator({ origin: ORIGIN, rpID: RP_ID })
    const response = authenticator.register(await registerOptions(user.browser))
    expect((await user.browser.post(`${P}/register/verify`, { response })).status).toBe(200)
    expect(await user.browser.post(`${P}/register/verify`, { response })).toMatchObject({ status: 400, body: { error: 'invalid_passkey_challenge' } })
    const again = await user.browser.post(`${P}/register/verify`, { response: authenticator.register(await registerOptions(user.browser)) })
    expect(again).toMatchObject({ status: 400, body: { error: 'passkey_exists' } })
  })

  it('refuses a challenge issued to another user', async () => {
    const alice = await newUser()
    const mallory = await newUser()
    const options = await registerOptions(alice.browser)
    const response = new SoftAuthenticator({ origin: ORIGIN, rpID: RP_ID }).register(options)
    expect(await mallory.browser.post(`${P}/register/verify`, { response })).toMatchObject({ status: 400, body: { error: 'invalid_passkey_challenge' } })
    // The challenge was used up by that attempt: its owner cannot use it either.
    expect(await alice.browser.post(`${P}/register/verify`, { response })).toMatchObject({ status: 400, body: { error: 'invalid_passkey_challenge' } })
  })

  it('needs a bearer token of the user (not an impersonated one)', async () => {
    const anonymous = new TestBrowser(app.base)
    expect(await anonymous.post(`${P}/register/options`)).toMatchObject({ status: 401, body: { error: 'unauthorized' } })
    expect(await anonymous.request('GET', `${P}/credentials`)).toMatchObject({ status: 401, body: { error: 'unauthorized' } })
    const { token } = await app.ctx.tokens.sign({ sub: 'target', impersonation: { originalUserSub: 'admin', originalUserLookupId: 'admin', impersonatedAt: new Date().toISOString() } })
    const impersonating = new TestBrowser(app.base, token)
    expect(await impersonating.post(`${P}/register/options`)).toMatchObject({ status: 403, body: { error: 'impersonated_session' } })
    expect(await impersonating.request('GET', `${P}/credentials`)).toMatchObject({ status: 403, body: { error: 'impersonated_session' } })
  })

  it('needs a recent login: a token issued 16 minutes ago is refused, with a security log line', async () => {
    const user = await newUser()
    const security = vi.spyOn(app.ctx.logger, 'security')
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 16 * 60_000 })
    try {
      expect(await user.browser.post(`${P}/register/options`)).toMatchObject({ status: 403, body: { error: 'reauthentication_required' } })
    }
    finally {
      vi.useRealTimers()
    }
    expect(security).toHaveBeenCalledWith('request.refused', expect.objectContaining({ actor: user.id, details: { reason: 'recent_login', action: 'passkey_register', ageSeconds: expect.any(Number) } }))
    await registerOptions(user.browser)
  })

  it('needs a recent login at verify too: options fetched while fresh do not register once the session is stale', async () => {
    const user = await newUser()
    const start = Date.now()
    const security = vi.spyOn(app.ctx.logger, 'security')
    vi.useFakeTimers({ toFake: ['Date'], now: start + 14 * 60_000 })
    try {
      const options = await registerOptions(user.browser)
      vi.setSystemTime(start + 16 * 60_000)
      const response = new SoftAuthenticator({ origin: ORIGIN, rpID: RP_ID }).register(options)
      expect(await user.browser.post(`${P}/register/verify`, { response })).toMatchObject({ status: 403, body: { error: 'reauthentication_required' } })
    }
    finally {
      vi.useRealTimers()
    }
    expect(security).toHaveBeenCalledWith('request.refused', expect.objectContaining({ actor: user.id, details: { reason: 'recent_login', action: 'passkey_register', ageSeconds: expect.any(Number) } }))
    expect([...app.host.credentials.values()].filter(c => c.userId === user.id)).toEqual([])
  })

  it('refuses a cross-site request', async () => {
    const user = await newUser()
    const answer = await user.browser.post(`${P}/register/options`, undefined, { headers: { 'origin': 'https://evil.example', 'sec-fetch-site': 'cross-site' } })
    expect(answer).toMatchObject({ status: 403, body: { error: 'cross_origin_request' } })
  })
})

describe('passkey login', () => {
  it('logs in without a username: empty allowCredentials, the login pipeline, the counter saved', async () => {
    const user = await userWithPasskey()
    const { browser, options } = await loginOptions()
    expect(options.allowCredentials).toEqual([])
    expect(options.rpId).toBe(RP_ID)
    expect(browser.cookies.get('__Host-svc-code')).toMatch(/^[\w-]{43}$/)
    const answer = await browser.post(`${P}/login/verify`, { response: user.authenticator.assert(options) })
    expect(answer.status).toBe(200)
    const { redirect } = passkeyLoginResponse.parse(answer.body)
    expect(redirect).toMatch(/^\/auth\/callback\?code=[\w-]+$/)
    const code = await consumeAuthCode(app.ctx, new URL(redirect, ORIGIN).searchParams.get('code')!)
    expect(code).toMatchObject({ provider: 'passkey', user: { sub: user.id, email: user.email, name: expect.any(String) } })
    expect(code!.binding).toBeDefined()
    expect(app.host.credentials.get(user.authenticator.id)).toMatchObject({ counter: 1, lastUsedAt: expect.any(String) })
    expect(app.hooks.some(h => h.name === 'svc:success' && (h.payload as { provider: string, user: { sub: string } }).provider === 'passkey' && (h.payload as { user: { sub: string } }).user.sub === user.id)).toBe(true)
  })

  it('passes the redirect chosen at the options to the callback page, only when it is a same-origin path', async () => {
    const user = await userWithPasskey()
    for (const [asked, kept] of [['/dashboard', '/dashboard'], ['https://evil.example/', undefined], ['//evil.example', undefined], ['/%252F%252Fevil.example', undefined], ['/a/..//evil.example', undefined]] as const) {
      const { browser, options } = await loginOptions({ redirect: asked })
      const { redirect } = passkeyLoginResponse.parse((await browser.post(`${P}/login/verify`, { response: user.authenticator.assert(options) })).body)
      const code = await consumeAuthCode(app.ctx, new URL(redirect, ORIGIN).searchParams.get('code')!)
      expect(code?.redirect).toBe(kept)
    }
  })

  it('lists the user\'s passkeys for an email hint, and the same decoys on every request for an email without any', async () => {
    const user = await userWithPasskey()
    // Hinted lists carry no transports (their order or absence would tell real ones from decoys).
    expect((await loginOptions({ email: user.email.toUpperCase() })).options.allowCredentials).toEqual([{ id: user.authenticator.id, type: 'public-key' }])
    const unknown1 = (await loginOptions({ email: 'nobody@example.com' })).options.allowCredentials!
    const unknown2 = (await loginOptions({ email: 'nobody@example.com' })).options.allowCredentials!
    expect(unknown1.length).toBeGreaterThan(0)
    expect(unknown2).toEqual(unknown1)
    // Decoys have the shape of real entries, 1 to 3 of them, with ids of the lengths authenticators use.
    const decoys = await Promise.all(Array.from({ length: 30 }, async (_, i) => (await loginOptions({ email: `nobody-${i}@example.com` })).options.allowCredentials!))
    expect(new Set(decoys.map(list => list.length))).toEqual(new Set([1, 2, 3]))
    const lengths = new Set(decoys.flat().map(decoy => Buffer.from(decoy.id, 'base64url').length))
    for (const length of lengths) expect([16, 20, 32, 48, 64]).toContain(length)
    expect(lengths.size).toBeGreaterThanOrEqual(4)
    for (const decoy of decoys.flat()) expect(Object.keys(decoy).sort()).toEqual(['id', 'type'])
    // A known user without passkeys looks the same as an unknown email.
    const bare = await newUser()
    expect((await loginOptions({ email: bare.email })).options.allowCredentials!.length).toBeGreaterThan(0)
    expect((await loginOptions({ email: 'nobody-else@example.com' })).options.allowCredentials).not.toEqual(unknown1)
    expect(await new TestBrowser(app.base).post(`${P}/login/options`, { email: 'not an email' })).toMatchObject({ status: 400, body: { error: 'invalid_email' } })
  })

  it('derives an email\'s decoys from the email and the server secret alone: the same after a restart, on any process', async () => {
    const email = 'nobody-stable@example.com'
    const decoys = decoyCredentials(app.ctx, email)
    for (let i = 0; i < 5; i++) expect(decoyCredentials(app.ctx, email)).toEqual(decoys)
    expect((await loginOptions({ email })).options.allowCredentials).toEqual(decoys.map(d => ({ ...d, type: 'public-key' })))
    // Another process or a restart with the same secret (a previous secret added does not matter).
    const secret = app.ctx.options.token.secret
    const restarted = await unitContext({ token: { secret } })
    const withPrevious = await unitContext({ token: { secret, previousSecrets: ['an-older-secret-0123456789-abcdefghijklmn'] } })
    expect(decoyCredentials(restarted, email)).toEqual(decoys)
    expect(decoyCredentials(withPrevious, email)).toEqual(decoys)
    // Another secret makes other decoys (what a rotation of `token.secret` does).
    const rotated = await unitContext({ token: { secret: 'a-rotated-secret-0123456789-abcdefghijklm', previousSecrets: [secret] } })
    expect(decoyCredentials(rotated, email)).not.toEqual(decoys)
  })

  it('checks the signature of an answer naming an unknown credential too (against a stand-in ES256 key), then refuses it alike', async () => {
    const user = await userWithPasskey()
    const other = await userWithPasskey()
    const decoy = (await loginOptions({ email: 'nobody-timing@example.com' })).options.allowCredentials![0]!.id
    /** A stranger's key answering with credential id `id` (a wrong signature for any stored passkey). */
    const forged = (id: string, options: PublicKeyCredentialRequestOptionsJSON) => {
      const stranger = new SoftAuthenticator({ origin: ORIGIN, rpID: RP_ID })
      Object.assign(stranger, { credentialId: Buffer.from(id, 'base64url') })
      return stranger.assert(options)
    }
    const algorithmOf = (cose: Uint8Array) => isoCBOR.decodeFirst<Map<number, unknown>>(new Uint8Array(cose)).get(3)
    const verify = vi.mocked(verifyAuthenticationResponse)
    const security = vi.spyOn(app.ctx.logger, 'security')
    const cases = [
      { name: 'real id', answer: (o: PublicKeyCredentialRequestOptionsJSON) => forged(user.authenticator.id, o), key: 'stored' },
      { name: 'decoy id', answer: (o: PublicKeyCredentialRequestOptionsJSON) => forged(decoy, o), key: 'stand-in' },
      { name: 'another user\'s handle', answer: (o: PublicKeyCredentialRequestOptionsJSON) => ({ ...user.authenticator.assert(o), response: { ...user.authenticator.assert(o).response, userHandle: other.authenticator.userHandle } }), key: 'stand-in' },
    ]
    const standIns: string[] = []
    for (const { name, answer, key } of cases) {
      const { browser, options } = await loginOptions({ email: user.email })
      verify.mockClear()
      expect(await browser.post(`${P}/login/verify`, { response: answer(options) }), name).toMatchObject({ status: 400, body: { statusCode: 400, error: 'invalid_passkey' } })
      // One verification each, through to the signature check (which fails).
      expect(verify, name).toHaveBeenCalledTimes(1)
      await expect(verify.mock.results[0]!.value, name).resolves.toMatchObject({ verified: false })
      const publicKey = verify.mock.calls[0]![0].credential.publicKey
      expect(algorithmOf(publicKey), name).toBe(algorithmOf(user.authenticator.cosePublicKey()))
      if (key === 'stored') expect(Buffer.from(publicKey), name).toEqual(Buffer.from(user.authenticator.cosePublicKey()))
      else standIns.push(Buffer.from(publicKey).toString('base64url'))
    }
    // The stand-in is one fixed key, no stored passkey's.
    expect(new Set(standIns).size).toBe(1)
    expect([...app.host.credentials.values()].map(c => c.publicKey)).not.toContain(standIns[0])
    expect(security.mock.calls.filter(([type, logged]) => type === 'login' && logged.outcome === 'failure').map(([, { subject, details }]) => ({ subject, details }))).toEqual([
      { subject: user.id, details: { provider: 'passkey', reason: 'bad_signature' } },
      { subject: null, details: { provider: 'passkey', reason: 'unknown_credential' } },
      { subject: null, details: { provider: 'passkey', reason: 'unknown_credential' } },
    ])
  })

  it('uses a challenge once: a replayed assertion is refused', async () => {
    const user = await userWithPasskey()
    const { browser, options } = await loginOptions()
    const response = user.authenticator.assert(options)
    expect((await browser.post(`${P}/login/verify`, { response })).status).toBe(200)
    expect(await browser.post(`${P}/login/verify`, { response })).toMatchObject({ status: 400, body: { statusCode: 400, error: 'invalid_passkey_challenge' } })
  })

  it('refuses a challenge of another browser', async () => {
    const user = await userWithPasskey()
    const { options } = await loginOptions()
    const thief = new TestBrowser(app.base)
    await thief.post(`${P}/login/options`)
    expect(await thief.post(`${P}/login/verify`, { response: user.authenticator.assert(options) })).toMatchObject({ status: 400, body: { error: 'invalid_passkey_challenge' } })
    expect(await new TestBrowser(app.base).post(`${P}/login/verify`, { response: user.authenticator.assert(options) })).toMatchObject({ status: 400, body: { error: 'invalid_passkey_challenge' } })
  })

  it('refuses a counter that went backwards, logs it as a security event and keeps the stored counter', async () => {
    const user = await userWithPasskey()
    const first = await loginOptions()
    expect((await first.browser.post(`${P}/login/verify`, { response: user.authenticator.assert(first.options, { counter: 10 }) })).status).toBe(200)
    const security = vi.spyOn(app.ctx.logger, 'security')
    for (const counter of [10, 3]) {
      const { browser, options } = await loginOptions()
      const answer = await browser.post(`${P}/login/verify`, { response: user.authenticator.assert(options, { counter }) })
      expect(answer).toMatchObject({ status: 401, body: { statusCode: 401, error: 'passkey_counter_regressed' } })
    }
    expect(security).toHaveBeenCalledWith('login', expect.objectContaining({ outcome: 'failure', subject: user.id, details: { provider: 'passkey', reason: 'counter_regressed', stored: 10, presented: 3 } }))
    expect(app.host.credentials.get(user.authenticator.id)!.counter).toBe(10)
    // An authenticator without a counter (always 0) keeps working.
    const zero = await userWithPasskey()
    for (let i = 0; i < 2; i++) {
      const { browser, options } = await loginOptions()
      expect((await browser.post(`${P}/login/verify`, { response: zero.authenticator.assert(options, { counter: 0 }) })).status).toBe(200)
    }
  })

  it('of 50 concurrent verifications of one assertion, exactly one logs in', async () => {
    const user = await userWithPasskey()
    const { browser, options } = await loginOptions()
    const response = user.authenticator.assert(options)
    const saves = app.host.saved.length
    const answers = await Promise.all(Array.from({ length: 50 }, () => browser.post(`${P}/login/verify`, { response })))
    expect(answers.filter(a => a.status === 200)).toHaveLength(1)
    expect(answers.filter(a => a.status === 400 && a.body.error === 'invalid_passkey_challenge')).toHaveLength(49)
    expect(app.host.saved.length - saves).toBe(1)
  })

  it('refuses an unknown credential, a bad signature, another origin or relying party, and a user handle of someone else', async () => {
    const user = await userWithPasskey()
    const other = await userWithPasskey()
    const stranger = new SoftAuthenticator({ origin: ORIGIN, rpID: RP_ID })
    const attempts: Array<(options: PublicKeyCredentialRequestOptionsJSON) => unknown> = [
      options => stranger.assert(options),
      (options) => {
        const response = user.authenticator.assert(options)
        const signature = Buffer.from(response.response.signature, 'base64url')
        signature[signature.length - 1]! ^= 1
        return { ...response, response: { ...response.response, signature: signature.toString('base64url') } }
      },
      options => user.authenticator.assert(options, { origin: 'https://evil.example' }),
      options => user.authenticator.assert(options, { rpID: 'evil.example' }),
      options => ({ ...user.authenticator.assert(options), response: { ...user.authenticator.assert(options).response, userHandle: other.authenticator.userHandle } }),
    ]
    for (const attempt of attempts) {
      const { browser, options } = await loginOptions()
      expect(await browser.post(`${P}/login/verify`, { response: attempt(options) })).toMatchObject({ status: 400, body: { error: 'invalid_passkey' } })
    }
  })

  it('answers malformed and oversized bodies with a 400 or 413 JSON error, never a 500', async () => {
    const user = await userWithPasskey()
    const { browser, options } = await loginOptions()
    const good = user.authenticator.assert(options)
    const bodies: unknown[] = [
      {},
      { response: null },
      { response: { ...good, type: 'password' } },
      { response: { ...good, id: 'not base64url!' } },
      { response: { ...good, response: { ...good.response, clientDataJSON: 'A'.repeat(5000) } } },
      { response: { ...good, response: { ...good.response, clientDataJSON: Buffer.from('not json').toString('base64url') } } },
      { response: { ...good, response: { ...good.response, authenticatorData: 'AAAA' } } },
    ]
    for (const body of bodies) {
      const answer = await browser.post(`${P}/login/verify`, body)
      expect(answer.status, JSON.stringify(body).slice(0, 80)).toBe(400)
      expect(answer.body).toMatchObject({ statusCode: 400, error: expect.stringMatching(/^(bad_request|invalid_passkey|invalid_passkey_challenge)$/), message: expect.any(String) })
    }
    expect(await browser.post(`${P}/login/verify`, undefined, { raw: '{"response":' })).toMatchObject({ status: 400, body: { error: 'bad_request' } })
    expect(await browser.post(`${P}/login/verify`, undefined, { raw: JSON.stringify({ response: good, pad: 'x'.repeat(20_000) }) })).toMatchObject({ status: 413, body: { error: 'payload_too_large' } })
    expect(await user.browser.post(`${P}/register/verify`, { response: { id: 'x' } })).toMatchObject({ status: 400, body: { error: 'bad_request' } })
    // Bodies the schema refused never reached the challenge; the malformed authenticatorData
    // carried the good challenge and used it up (any answer to a challenge consumes it).
    expect(await browser.post(`${P}/login/verify`, { response: good })).toMatchObject({ status: 400, body: { error: 'invalid_passkey_challenge' } })
  })
})

describe('secrets of the ceremonies', () => {
  it('keeps challenges out of storage keys, stored values and logs', async () => {
    const local = await startPasskeyApp({ logging: { level: 'debug', security: true } })
    const lines: string[] = []
    for (const level of ['error', 'warn', 'info', 'debug'] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        lines.push(args.map(a => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '))
      })
    }
    try {
      const { token } = await local.ctx.tokens.sign({ sub: 'secret-user', email: 'secret-user@example.com' })
      const owner = new TestBrowser(local.base, token)
      const authenticator = new SoftAuthenticator({ origin: ORIGIN, rpID: RP_ID })
      const creation = (await owner.post<PublicKeyCredentialCreationOptionsJSON>(`${P}/register/options`)).body
      const browser = new TestBrowser(local.base)
      const request = (await browser.post<PublicKeyCredentialRequestOptionsJSON>(`${P}/login/options`)).body
      const dump = JSON.stringify(await local.dump())
      expect(dump).toContain('passkey-challenge:')
      for (const challenge of [creation.challenge, request.challenge]) expect(dump).not.toContain(challenge)
      expect((await owner.post(`${P}/register/verify`, { response: authenticator.register(creation) })).status).toBe(200)
      // A refused answer is logged without the values it was compared with.
      const wrong = await browser.post(`${P}/login/verify`, { response: authenticator.assert(request, { origin: 'https://evil.example' }) })
      expect(wrong.body.error).toBe('invalid_passkey')
      const stored = local.host.credentials.get(authenticator.id)!
      const logged = lines.join('\n')
      expect(logged).toContain('[svc-auth:security] login')
      expect(logged).toContain('bad_signature')
      for (const secret of [creation.challenge, request.challenge, stored.publicKey, 'evil.example']) expect(logged).not.toContain(secret)
    }
    finally {
      await local.close()
    }
  })

  it('refuses an assertion without user verification when userVerification is required', async () => {
    const strict = await startPasskeyApp({ providers: { passkey: { userVerification: 'required' } } })
    try {
      const { token } = await strict.ctx.tokens.sign({ sub: 'strict-user' })
      const owner = new TestBrowser(strict.base, token)
      const authenticator = new SoftAuthenticator({ origin: ORIGIN, rpID: RP_ID })
      const creation = (await owner.post<PublicKeyCredentialCreationOptionsJSON>(`${P}/register/options`)).body
      expect(creation.authenticatorSelection?.userVerification).toBe('required')
      expect(await owner.post(`${P}/register/verify`, { response: authenticator.register(creation, { userVerified: false }) })).toMatchObject({ status: 400, body: { error: 'invalid_passkey' } })
      expect((await owner.post(`${P}/register/verify`, { response: authenticator.register((await owner.post<PublicKeyCredentialCreationOptionsJSON>(`${P}/register/options`)).body) })).status).toBe(200)
      const browser = new TestBrowser(strict.base)
      const request = (await browser.post<PublicKeyCredentialRequestOptionsJSON>(`${P}/login/options`)).body
      expect(await browser.post(`${P}/login/verify`, { response: authenticator.assert(request, { userVerified: false }) })).toMatchObject({ status: 400, body: { error: 'invalid_passkey' } })
    }
    finally {
      await strict.close()
    }
  })
})

describe('the host\'s store', () => {
  it('tells saveCredential a new passkey (insert) from a login\'s update', async () => {
    const user = await userWithPasskey()
    expect(app.host.created.at(-1)).toBe(true)
    const { browser, options } = await loginOptions()
    expect((await browser.post(`${P}/login/verify`, { response: user.authenticator.assert(options) })).status).toBe(200)
    expect(app.host.created.at(-1)).toBe(false)
  })

  it('refuses a passkey login of a user findUser no longer finds (a deleted or blocked account)', async () => {
    const user = await userWithPasskey()
    app.host.users.delete(user.email)
    const { browser, options } = await loginOptions()
    expect(await browser.post(`${P}/login/verify`, { response: user.authenticator.assert(options) })).toMatchObject({ status: 400, body: { error: 'invalid_passkey' } })
    expect(app.host.created.at(-1)).toBe(true)
  })

  it('refuses to register an id that the host finds in another case, or an answer naming another id than its authenticator data', async () => {
    const victim = await userWithPasskey()
    const mallory = await newUser()
    // A host whose id column ignores case (a case-insensitive collation).
    const loose = new SoftAuthenticator({ origin: ORIGIN, rpID: RP_ID })
    const flipped = victim.authenticator.id.replace(/[a-z]/, c => c.toUpperCase())
    expect(flipped).not.toBe(victim.authenticator.id)
    Object.assign(loose, { credentialId: Buffer.from(flipped, 'base64url') })
    const lookup = vi.fn((id: string) => [...app.host.credentials.values()].find(c => c.id.toLowerCase() === id.toLowerCase()) ?? null)
    defineAuthHandlers({ passkey: { findCredential: lookup } })
    try {
      expect(await mallory.browser.post(`${P}/register/verify`, { response: loose.register(await registerOptions(mallory.browser)) })).toMatchObject({ status: 400, body: { error: 'passkey_exists' } })
    }
    finally {
      defineAuthHandlers({ passkey: HOST_HANDLERS })
    }
    expect(lookup).toHaveBeenCalledWith(flipped, expect.anything())
    expect(app.host.credentials.get(victim.authenticator.id)?.userId).toBe(victim.id)
    // The answer's id must be the id in its authenticator data.
    const other = new SoftAuthenticator({ origin: ORIGIN, rpID: RP_ID })
    const answer = other.register(await registerOptions(mallory.browser))
    const renamed = { ...answer, id: victim.authenticator.id, rawId: victim.authenticator.id }
    expect(await mallory.browser.post(`${P}/register/verify`, { response: renamed })).toMatchObject({ status: 400, body: { error: 'invalid_passkey' } })
  })
})

describe('answers of another authenticator or frame', () => {
  it('refuses a ceremony run in a frame of another origin (crossOrigin), at registration and login', async () => {
    const user = await newUser()
    const authenticator = new SoftAuthenticator({ origin: ORIGIN, rpID: RP_ID })
    expect(await user.browser.post(`${P}/register/verify`, { response: authenticator.register(await registerOptions(user.browser), { crossOrigin: true }) })).toMatchObject({ status: 400, body: { error: 'invalid_passkey' } })
    expect((await user.browser.post(`${P}/register/verify`, { response: authenticator.register(await registerOptions(user.browser)) })).status).toBe(200)
    const { browser, options } = await loginOptions()
    expect(await browser.post(`${P}/login/verify`, { response: authenticator.assert(options, { crossOrigin: true }) })).toMatchObject({ status: 400, body: { error: 'invalid_passkey' } })
  })

  it('refuses a login whose backup eligibility differs from the stored passkey\'s (another authenticator has its key)', async () => {
    const user = await userWithPasskey()
    const security = vi.spyOn(app.ctx.logger, 'security')
    app.host.credentials.get(user.authenticator.id)!.deviceType = 'multiDevice'
    const { browser, options } = await loginOptions()
    expect(await browser.post(`${P}/login/verify`, { response: user.authenticator.assert(options) })).toMatchObject({ status: 400, body: { error: 'invalid_passkey' } })
    expect(security).toHaveBeenCalledWith('login', expect.objectContaining({ outcome: 'failure', subject: user.id, details: { provider: 'passkey', reason: 'backup_eligibility_changed', stored: 'multiDevice', presented: 'singleDevice' } }))
    expect(app.host.credentials.get(user.authenticator.id)!.counter).toBe(0)
  })
})

describe('passkeys and the second factor', () => {
  it('a passkey verified with user verification skips the second factor; one without is asked for it', async () => {
    const guarded = await startPasskeyApp({ twoFactor: { enabled: true, requireForAll: true } })
    defineAuthHandlers({ twoFactor: { find: () => null, save: () => {} } })
    try {
      guarded.host.users.set('guarded@example.com', { id: 'guarded-user', email: 'guarded@example.com', name: 'Guarded' })
      const { token } = await guarded.ctx.tokens.sign({ sub: 'guarded-user' })
      const owner = new TestBrowser(guarded.base, token)
      const authenticator = new SoftAuthenticator({ origin: ORIGIN, rpID: RP_ID })
      const creation = (await owner.post<PublicKeyCredentialCreationOptionsJSON>(`${P}/register/options`)).body
      expect((await owner.post(`${P}/register/verify`, { response: authenticator.register(creation) })).status).toBe(200)
      const login = async (userVerified: boolean) => {
        const browser = new TestBrowser(guarded.base)
        const request = (await browser.post<PublicKeyCredentialRequestOptionsJSON>(`${P}/login/options`)).body
        const answer = await browser.post(`${P}/login/verify`, { response: authenticator.assert(request, { userVerified }) })
        expect(answer.status).toBe(200)
        return passkeyLoginResponse.parse(answer.body).redirect
      }
      expect(await login(true)).toMatch(/^\/auth\/callback\?code=[\w-]+$/)
      expect(await login(false)).toMatch(/^\/auth\/second-factor\?flow=[\w-]+&enrol=1$/)
    }
    finally {
      await guarded.close()
    }
  })
})

describe('managing passkeys', () => {
  it('needs a recent login to delete a passkey, and tells the host through svc:passkey:deleted', async () => {
    const user = await userWithPasskey()
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 16 * 60_000 })
    try {
      expect(await user.browser.request('DELETE', `${P}/credentials/${user.authenticator.id}`)).toMatchObject({ status: 403, body: { error: 'reauthentication_required' } })
    }
    finally {
      vi.useRealTimers()
    }
    expect(app.host.credentials.has(user.authenticator.id)).toBe(true)
    expect(await user.browser.request('DELETE', `${P}/credentials/${user.authenticator.id}`)).toMatchObject({ status: 200 })
    expect(app.hooks.find(h => h.name === 'svc:passkey:deleted' && (h.payload as { userId: string }).userId === user.id)?.payload).toMatchObject({ credential: { id: user.authenticator.id, name: 'Laptop' } })
  })

  it('deletes the user\'s own passkey only', async () => {
    const alice = await userWithPasskey()
    const bob = await userWithPasskey()
    expect(await bob.browser.request('DELETE', `${P}/credentials/${alice.authenticator.id}`)).toMatchObject({ status: 404, body: { error: 'not_found' } })
    expect(app.host.credentials.has(alice.authenticator.id)).toBe(true)
    expect(await alice.browser.request('DELETE', `${P}/credentials/${encodeURIComponent('../x')}`)).toMatchObject({ status: 404 })
    expect(await alice.browser.request('DELETE', `${P}/credentials/${alice.authenticator.id}`)).toMatchObject({ status: 200, body: { success: true } })
    expect(app.host.credentials.has(alice.authenticator.id)).toBe(false)
    // A deleted passkey logs in no more.
    const { browser, options } = await loginOptions()
    expect(await browser.post(`${P}/login/verify`, { response: alice.authenticator.assert(options) })).toMatchObject({ status: 400, body: { error: 'invalid_passkey' } })
  })
})
