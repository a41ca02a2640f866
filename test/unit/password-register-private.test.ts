import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import * as signIn from '../../src/runtime/password/server/password-flows'
import type { PasswordUser, VerificationCodeDetails } from '../../src/runtime/types/auth'
import { servePasswordFlows } from './helpers/password-app'
import { compareTimings, timingsWithin } from '../support/timing'

// Registration with revealExistingAccounts: false, on a plain h3 app (memory store, bcrypt cost 4).
const PASSWORD = 'Sunflower-42x'
let app: Awaited<ReturnType<typeof servePasswordFlows>>
beforeAll(async () => {
  app = await servePasswordFlows({ revealExistingAccounts: false }, { 'register': signIn.register, 'register-verify': signIn.registerVerify })
})
afterAll(async () => {
  resetAuthHandlers()
  await app?.close()
})

interface Sent { email: string, code: string, action: string, details: VerificationCodeDetails }
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

/** Accounts in memory; `lookupMs`/`sendMs`: a lookup slower for existing rows, and a slow mail server. */
function accounts({ lookupMs = 0, sendMs = 0 } = {}) {
  // An owner of its own per call: the notices of an address are rate limited across tests.
  const owner = `owner-${counter++}@example.com`
  const users = new Map<string, PasswordUser>([[owner, { id: 'owner', email: owner, hashedPassword: 'x' }]])
  const sent: Sent[] = []
  const persisted: string[] = []
  defineAuthHandlers({
    onUserPersist: (user) => {
      persisted.push(String(user.email))
      return { id: `id-${String(user.email)}` }
    },
    password: {
      findUser: async (email) => {
        const user = users.get(email) ?? null
        if (user && lookupMs) await sleep(lookupMs)
        return user
      },
      sendVerificationCode: async (email, code, action, details) => {
        if (sendMs) await sleep(sendMs)
        sent.push({ email, code, action, details })
      },
    },
  })
  return { owner, users, sent, persisted }
}

let counter = 0
const fresh = () => `new-${counter++}@example.com`

const post = (path: string, body: unknown) => fetch(`${app.base}/auth/password/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'accept': 'application/json' }, body: JSON.stringify(body) })

/** Everything a client sees of an answer but its date: status, headers (cookies included) and body. */
async function seen(res: Response) {
  const headers = [...res.headers].filter(([name]) => name !== 'date' && name !== 'keep-alive')
  return { status: res.status, headers, cookies: res.headers.getSetCookie(), body: await res.text() }
}

beforeEach(() => resetAuthHandlers())

describe('registration that does not reveal accounts', () => {
  it('answers a new and an existing address exactly alike', async () => {
    const { owner } = accounts()
    const existing = await seen(await post('register', { email: owner, password: PASSWORD }))
    const unknown = await seen(await post('register', { email: fresh(), password: PASSWORD }))
    expect(existing).toEqual(unknown)
    expect(existing).toMatchObject({ status: 200, body: JSON.stringify({ success: true }), cookies: [] })
  })

  it('sends a new address a code that creates the account', async () => {
    const { sent, persisted } = accounts()
    const email = fresh()
    expect((await post('register', { email, password: PASSWORD })).status).toBe(200)
    await vi.waitFor(() => expect(sent).toHaveLength(1))
    expect(sent[0]).toMatchObject({ email, action: 'register', code: expect.stringMatching(/^\d{6}$/) })
    const verified = await post('register-verify', { email, code: sent[0]!.code })
    expect(verified.status).toBe(200)
    expect(persisted).toEqual([email])
  })

  it('tells the owner of an existing account, with no code, link or flow, and stores no code for it', async () => {
    const { owner, sent, persisted } = accounts()
    expect((await post('register', { email: owner, password: PASSWORD })).status).toBe(200)
    await vi.waitFor(() => expect(sent).toHaveLength(1))
    expect(sent[0]).toMatchObject({ email: owner, action: 'account_exists', code: '', details: { link: '', flow: '' } })
    expect(sent[0]!.details.expiresAt).toBeInstanceOf(Date)
    // No pending registration exists for the address: no code of the register action verifies for it.
    for (const code of ['000000', '123456']) {
      expect(await (await post('register-verify', { email: owner, code })).json()).toMatchObject({ error: 'invalid_verification_code' })
    }
    expect(persisted).toEqual([])
  })

  it('sends the owner at most one notice an hour, however often the address is registered', async () => {
    const { owner: email, sent } = accounts()
    for (let i = 0; i < 5; i++) expect((await post('register', { email, password: PASSWORD })).status).toBe(200)
    await sleep(50)
    expect(sent.filter(m => m.email === email)).toHaveLength(1)
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      vi.setSystemTime(Date.now() + (signIn.ACCOUNT_EXISTS_NOTICE_WINDOW + 1) * 1000)
      expect((await post('register', { email, password: PASSWORD })).status).toBe(200)
      await vi.waitFor(() => expect(sent.filter(m => m.email === email)).toHaveLength(2))
    }
    finally {
      vi.useRealTimers()
    }
  })

  it('register-verify names no account created since the code was sent', async () => {
    const { users, sent, persisted } = accounts()
    const email = fresh()
    await post('register', { email, password: PASSWORD })
    await vi.waitFor(() => expect(sent).toHaveLength(1))
    users.set(email, { id: 'other', email, hashedPassword: 'x' })
    const res = await post('register-verify', { email, code: sent[0]!.code })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: 'invalid_verification_code' })
    expect(persisted).toEqual([])
  })

  it('answers alike when the delivery fails after the answer, and logs it', async () => {
    const errors = vi.spyOn(app.ctx.logger, 'error').mockImplementation(() => {})
    defineAuthHandlers({
      password: {
        findUser: email => email === 'failing-owner@example.com' ? { email, hashedPassword: 'x' } : null,
        sendVerificationCode: () => {
          throw new Error('mail server down')
        },
      },
    })
    for (const email of ['failing-owner@example.com', fresh()]) expect((await post('register', { email, password: PASSWORD })).status).toBe(200)
    await vi.waitFor(() => expect(errors).toHaveBeenCalledTimes(2))
    expect(errors.mock.calls.map(call => call[0])).toEqual(expect.arrayContaining(['Sending the register code failed', 'Handling a registration failed']))
    errors.mockRestore()
  })

  it('still refuses a password the policy refuses, for every address alike', async () => {
    const { owner } = accounts()
    for (const email of [owner, fresh()]) expect(await (await post('register', { email, password: 'short' })).json()).toMatchObject({ error: 'password_policy' })
  })
})

describe('timing of registration without revealing accounts', () => {
  // A lookup 25 ms slower for existing rows and a 40 ms mail server: the leaks this guards against.
  it('takes the same time for an existing and a new address', async () => {
    const { owner } = accounts({ lookupMs: 25, sendMs: 40 })
    const gap = await compareTimings({
      a: () => post('register', { email: owner, password: PASSWORD }),
      b: () => post('register', { email: fresh(), password: PASSWORD }),
    })
    expect(timingsWithin(gap), JSON.stringify(gap)).toBe(true)
  })
})
