import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { authErrorCode, renderText } from '../../src/runtime/server/lib/edge/errors'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import * as signIn from '../../src/runtime/password/server/password-flows'
import * as newPassword from '../../src/runtime/password/server/new-password'
import { breachGuard, countOf, lookupBreach, MAX_BREACH_ANSWER_BYTES } from '../../src/runtime/password/server/breach-check'
import { BREACHED } from '../../src/runtime/password/server/policy'
import { usePasswordRuntime } from '../../src/runtime/password/server/password-runtime'
import { memoryPasswordAccounts, servePasswordFlows } from './helpers/password-app'
import { sha1, startRangeApi, type RangeApi } from '../support/range-api'

const FLOWS = { 'register': signIn.register, 'reset-request': newPassword.resetRequest, 'reset-verify': newPassword.resetVerify, 'reset-complete': newPassword.resetComplete, 'change': newPassword.change }
const BREACHED_PASSWORD = 'Correct-Horse-9'
const FRESH_PASSWORD = 'Quiet-Lantern-Orbit-71'

let api: RangeApi
let other: RangeApi
beforeAll(async () => {
  api = await startRangeApi()
  other = await startRangeApi()
})
afterAll(async () => {
  await api?.close()
  await other?.close()
})
beforeEach(() => {
  api.requests.length = 0
  api.state.mode = { kind: 'counts', counts: { [sha1(BREACHED_PASSWORD)]: 3 }, padding: 20 }
})

const options = (over: Partial<Parameters<typeof lookupBreach>[0]> = {}) => ({ enabled: true, url: api.url, threshold: 0, timeout: 1500, failClosed: false, ...over })

describe('the range lookup', () => {
  it('sends only the first 5 uppercase hex characters of the SHA-1, with Add-Padding, and nothing else of the password', async () => {
    const hash = sha1(BREACHED_PASSWORD)
    expect(await lookupBreach(options(), BREACHED_PASSWORD)).toEqual({ status: 'breached', count: 3 })
    expect(api.requests).toHaveLength(1)
    const [request] = api.requests
    expect(request!.method).toBe('GET')
    expect(request!.url).toMatch(/^\/range\/[0-9A-F]{5}$/)
    expect(request!.url).toBe(`/range/${hash.slice(0, 5)}`)
    expect(request!.headers['add-padding']).toBe('true')
    expect(request!.body).toBe('')
    const received = api.received().toUpperCase()
    for (const secret of [BREACHED_PASSWORD.toUpperCase(), hash, hash.slice(5), hash.slice(5, 12)]) expect(received).not.toContain(secret)
  })

  it('hashes the password in normal form (NFC) as UTF-8, and a trailing slash of the URL is dropped', async () => {
    const password = 'Cafe\u0301-Noir-12'
    api.state.mode = { kind: 'counts', counts: { [sha1(password.normalize('NFC'))]: 1 } }
    expect(await lookupBreach(options({ url: `${api.url}/` }), password.normalize('NFC'))).toEqual({ status: 'breached', count: 1 })
    expect(api.requests[0]!.url).toBe(`/range/${sha1(password.normalize('NFC')).slice(0, 5)}`)
  })

  it('refuses only above the threshold', async () => {
    expect(await lookupBreach(options({ threshold: 2 }), BREACHED_PASSWORD)).toEqual({ status: 'breached', count: 3 })
    expect(await lookupBreach(options({ threshold: 3 }), BREACHED_PASSWORD)).toEqual({ status: 'clean' })
    expect(await lookupBreach(options(), FRESH_PASSWORD)).toEqual({ status: 'clean' })
  })

  it('counts a padding entry (count 0) as not seen, even for the password\'s own suffix', async () => {
    api.state.mode = { kind: 'counts', counts: { [sha1(FRESH_PASSWORD)]: 0 }, padding: 500 }
    expect(await lookupBreach(options(), FRESH_PASSWORD)).toEqual({ status: 'clean' })
    expect(countOf(`${sha1(FRESH_PASSWORD).slice(5).toLowerCase()}:7\r\n`, sha1(FRESH_PASSWORD).slice(5))).toBe(7)
  })

  it('reports a server error, a malformed body or a redirect as unavailable, and follows no redirect', async () => {
    for (const status of [500, 503, 404, 429]) {
      api.state.mode = { kind: 'status', status }
      expect(await lookupBreach(options(), BREACHED_PASSWORD)).toEqual({ status: 'unavailable', reason: `HTTP ${status}` })
    }
    for (const body of ['', '\r\n', '<html>maintenance</html>', `${sha1(BREACHED_PASSWORD).slice(5)}:3\nnot a line`, `${sha1(BREACHED_PASSWORD).slice(5)}:-3`, 'ABC:1']) {
      api.state.mode = { kind: 'body', body }
      expect(await lookupBreach(options(), BREACHED_PASSWORD), body).toEqual({ status: 'unavailable', reason: 'malformed answer' })
    }
    other.state.mode = { kind: 'counts', counts: { [sha1(BREACHED_PASSWORD)]: 3 } }
    api.state.mode = { kind: 'redirect', location: `${other.url}/range/${sha1(BREACHED_PASSWORD).slice(0, 5)}` }
    expect(await lookupBreach(options(), BREACHED_PASSWORD)).toEqual({ status: 'unavailable', reason: 'HTTP 302' })
    expect(other.requests).toHaveLength(0)
  })

  it('gives up on a slow API after the timeout', async () => {
    api.state.mode = { kind: 'slow', ms: 10_000 }
    const started = performance.now()
    expect(await lookupBreach(options({ timeout: 200 }), BREACHED_PASSWORD)).toEqual({ status: 'unavailable', reason: 'no answer within 200 ms' })
    expect(performance.now() - started).toBeLessThan(1500)
  })

  it('stops reading an endless answer at its size limit and closes the connection', async () => {
    api.state.mode = { kind: 'endless' }
    api.state.closedEarly = 0
    const started = performance.now()
    expect(await lookupBreach(options({ timeout: 20_000 }), BREACHED_PASSWORD)).toEqual({ status: 'unavailable', reason: `answer over ${MAX_BREACH_ANSWER_BYTES} bytes` })
    expect(performance.now() - started).toBeLessThan(5000)
    await vi.waitFor(() => expect(api.state.closedEarly).toBe(1))
  })

  it('reports an API that cannot be reached as unavailable', async () => {
    const closed = await startRangeApi()
    await closed.close()
    expect(await lookupBreach(options({ url: closed.url }), BREACHED_PASSWORD)).toMatchObject({ status: 'unavailable', reason: expect.stringMatching(/^request failed/) })
  })
})

describe('the guard of new passwords', () => {
  it('asks nothing when off', async () => {
    expect(await breachGuard(options({ enabled: false }), () => {})(BREACHED_PASSWORD)).toBe(false)
    expect(api.requests).toHaveLength(0)
  })

  it('fails open with a warning by default, closed with 503 breach_check_unavailable when configured', async () => {
    api.state.mode = { kind: 'status', status: 502 }
    const warnings: string[] = []
    expect(await breachGuard(options(), message => warnings.push(message))(BREACHED_PASSWORD)).toBe(false)
    expect(warnings).toEqual(['The breach check of a new password failed (HTTP 502): the password was accepted unchecked'])
    const closed = breachGuard(options({ failClosed: true }), message => warnings.push(message))
    const error = await closed(BREACHED_PASSWORD).catch((e: unknown) => e)
    expect(authErrorCode(error)).toBe('breach_check_unavailable')
    expect(error).toMatchObject({ statusCode: 503 })
    expect(warnings[1]).toMatch(/refused/)
    expect(warnings.join('\n')).not.toContain(sha1(BREACHED_PASSWORD).slice(0, 5))
  })
})

describe('register, reset and change', () => {
  let app: Awaited<ReturnType<typeof servePasswordFlows>>
  let accounts: ReturnType<typeof memoryPasswordAccounts>
  let cookie = ''
  beforeAll(async () => {
    app = await servePasswordFlows({ breachCheck: { enabled: true, url: api.url } }, FLOWS)
  })
  afterAll(() => app?.close())
  beforeEach(() => {
    resetAuthHandlers()
    accounts = memoryPasswordAccounts()
    defineAuthHandlers({ password: accounts.handlers })
  })

  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${app.base}/auth/password/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'accept': 'application/json', ...(cookie ? { cookie } : {}), ...headers }, body: JSON.stringify(body) })
    const set = res.headers.getSetCookie().find(line => line.startsWith('__Host-svc-code='))
    if (set) cookie = set.split(';')[0]!
    return res
  }
  const expectBreached = async (res: Response) => {
    expect(res.status).toBe(400)
    const body = await res.json() as { error: string, message: string }
    expect(body).toMatchObject({ statusCode: 400, error: 'password_policy' })
    expect(body.message).toBe(`Password does not meet the policy: needs ${renderText(BREACHED)}`)
  }

  it('register refuses a breached password before hashing it, and sends no code', async () => {
    const hash = vi.spyOn(usePasswordRuntime(app.ctx).hasher, 'hash')
    await expectBreached(await post('register', { email: 'pwned@example.com', password: BREACHED_PASSWORD }))
    expect(hash).not.toHaveBeenCalled()
    expect(accounts.codes).toEqual([])
    expect(api.requests).toHaveLength(1)
    expect((await post('register', { email: 'pwned@example.com', password: FRESH_PASSWORD })).status).toBe(200)
    expect(hash).toHaveBeenCalledTimes(1)
    expect(accounts.codes).toMatchObject([{ email: 'pwned@example.com', action: 'register' }])
    hash.mockRestore()
  })

  it('asks the API only about a password the policy accepts', async () => {
    const res = await post('register', { email: 'weak@example.com', password: 'password' })
    expect(await res.json()).toMatchObject({ error: 'password_policy' })
    expect(api.requests).toHaveLength(0)
  })

  it('reset-complete refuses a breached password and keeps the session for another try', async () => {
    accounts.users.set('reset@example.com', { id: 'id-reset@example.com', email: 'reset@example.com', hashedPassword: await usePasswordRuntime(app.ctx).hasher.hash(FRESH_PASSWORD) })
    expect((await post('reset-request', { email: 'reset@example.com' })).status).toBe(200)
    await vi.waitFor(() => expect(accounts.codes.at(-1)?.action).toBe('reset'))
    const { sessionId } = await (await post('reset-verify', { email: 'reset@example.com', code: accounts.codes.at(-1)!.code })).json() as { sessionId: string }
    await expectBreached(await post('reset-complete', { sessionId, newPassword: BREACHED_PASSWORD }))
    expect((await post('reset-complete', { sessionId, newPassword: 'Another-Fresh-88' })).status).toBe(200)
  })

  it('change refuses a breached new password', async () => {
    accounts.users.set('change@example.com', { id: 'id-change@example.com', email: 'change@example.com', hashedPassword: await usePasswordRuntime(app.ctx).hasher.hash(FRESH_PASSWORD) })
    const { token } = await app.ctx.tokens.sign({ sub: 'id-change@example.com', email: 'change@example.com' })
    const bearer = { authorization: `Bearer ${token}` }
    await expectBreached(await post('change', { currentPassword: FRESH_PASSWORD, newPassword: BREACHED_PASSWORD }, bearer))
    expect((await post('change', { currentPassword: FRESH_PASSWORD, newPassword: 'Another-Fresh-88' }, bearer)).status).toBe(200)
  })

  it('accepts the password and logs a warning when the API fails (fail open)', async () => {
    const warn = vi.spyOn(app.ctx.logger, 'warn').mockImplementation(() => {})
    api.state.mode = { kind: 'status', status: 500 }
    expect((await post('register', { email: 'open@example.com', password: BREACHED_PASSWORD })).status).toBe(200)
    expect(warn).toHaveBeenCalledWith('The breach check of a new password failed (HTTP 500): the password was accepted unchecked')
    warn.mockRestore()
  })

  it('answers 503 breach_check_unavailable when configured to fail closed, fast on a slow API', async () => {
    const closed = await servePasswordFlows({ breachCheck: { enabled: true, url: api.url, failClosed: true, timeout: 300 } }, FLOWS)
    try {
      const warn = vi.spyOn(closed.ctx.logger, 'warn').mockImplementation(() => {})
      api.state.mode = { kind: 'slow', ms: 10_000 }
      const started = performance.now()
      const res = await fetch(`${closed.base}/auth/password/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'closed@example.com', password: FRESH_PASSWORD }) })
      expect(performance.now() - started).toBeLessThan(2000)
      expect(res.status).toBe(503)
      expect(await res.json()).toEqual({ statusCode: 503, error: 'breach_check_unavailable', message: 'The password could not be checked against known data breaches: try again shortly' })
      expect(accounts.codes).toEqual([])
      expect(warn).toHaveBeenCalledTimes(1)
    }
    finally {
      await closed.close()
    }
  })
})
