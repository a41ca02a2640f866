import { describe, expect, it, vi } from 'vitest'
import { errorOf, json, magicLinkApp } from './helpers/magic-link-app'
import { defineAuthHandlers, getAuthHandlers } from '../../src/runtime/server/lib/core/handlers'

// Attacks on the short code of a link opened on another device, on the memory store (the store's atomic parts are
// tested on every driver by the suite): a code without its address, and guesses from a browser that did not ask.
vi.mock('nitropack/runtime', () => import('./helpers/nitro-stub'))

const app = magicLinkApp('memory')
const { browser, account, linkOf } = app

/** A link asked for in `asker` and opened on a phone: the address, the asking browser and the short code shown. */
async function openedElsewhere() {
  const email = account()
  const asker = browser()
  await json(await asker.ask(email))
  const { code } = await json<{ code: string }>(await browser().redeem(await linkOf(email)))
  return { email, asker, code }
}

const wrongOf = (code: string, n = 1) => String((Number(code) + n) % 1_000_000).padStart(6, '0')

describe('the short code without its address', () => {
  it('is refused (400 invalid_email): no lookup by the code alone, which no attempt limit of a code would count', async () => {
    const { email, asker, code } = await openedElsewhere()
    for (let i = 1; i <= 6; i++) expect(await errorOf(await asker.enterCode('', wrongOf(code, i)), 400)).toBe('invalid_email')
    expect(await errorOf(await asker.enterCode('  ', code), 400)).toBe('invalid_email')
    // Neither counted against the code nor spent it.
    const { redirect } = await json<{ redirect: string }>(await asker.enterCode(email, code))
    expect(await asker.exchange(redirect)).toMatchObject({ sub: `id-${email}` })
  })
})

describe('guesses from a browser that did not ask', () => {
  it('neither use up the code\'s attempts nor the address\'s failure budget: the asker still logs in', async () => {
    const { email, asker, code } = await openedElsewhere()
    const attacker = browser()
    // Past codeMaxAttempts (5) and the failures allowed per address (rateLimit.verifyFailures.perEmail, 10).
    for (let i = 1; i <= 12; i++) expect(await errorOf(await attacker.enterCode(email, wrongOf(code, i)), 400)).toBe('invalid_verification_code')
    const { redirect } = await json<{ redirect: string }>(await asker.enterCode(email, code))
    expect(await asker.exchange(redirect)).toMatchObject({ sub: `id-${email}` })
  })

  it('do not spend the right code (read over a shoulder): it still works in the browser that asked', async () => {
    const { email, asker, code } = await openedElsewhere()
    expect(await errorOf(await browser().enterCode(email, code), 400)).toBe('invalid_verification_code')
    const { redirect } = await json<{ redirect: string }>(await asker.enterCode(email, code))
    expect(redirect).toMatch(/^\/auth\/callback\?code=/)
  })

  it('tell nothing of a pending code: an address with one and an address without answer alike', async () => {
    const { email, code } = await openedElsewhere()
    const idle = account()
    const attacker = browser()
    for (let i = 1; i <= 6; i++) {
      const answers = await Promise.all([attacker.enterCode(email, wrongOf(code, i)), attacker.enterCode(idle, wrongOf(code, i))])
      expect(await Promise.all(answers.map(res => errorOf(res, 400)))).toEqual(['invalid_verification_code', 'invalid_verification_code'])
    }
  })

  it('are login failures (reason other_browser), recorded as one event per client each 5 minutes', async () => {
    const { email, code } = await openedElsewhere()
    const ctx = app.ctx()
    const recordEvent = vi.fn(async () => {})
    const before = ctx.recordEvent
    ctx.recordEvent = recordEvent
    try {
      await errorOf(await browser().enterCode(email, wrongOf(code)), 400)
    }
    finally {
      ctx.recordEvent = before
    }
    expect(recordEvent).toHaveBeenCalledWith(expect.objectContaining({
      type: 'login',
      outcome: 'failure',
      details: { provider: 'magicLink', reason: 'other_browser' },
      aggregate: { key: expect.stringMatching(/^magicLink:other_browser\0/), seconds: 300 },
    }))
  })
})

describe('the page to land on', () => {
  it('is kept only when a same-origin path after every layer of percent-encoding (as a provider login\'s)', async () => {
    const landing = async (redirect: string) => {
      const email = account()
      const asker = browser()
      await json(await asker.ask(email, redirect))
      const answer = await json<{ redirect: string }>(await asker.redeem(await linkOf(email)))
      const code = new URL(answer.redirect, 'http://x').searchParams.get('code')
      return (await json<{ redirect?: string }>(await asker.send('POST', '/auth/token', { code }))).redirect
    }
    expect(await landing('/dashboard?tab=1')).toBe('/dashboard?tab=1')
    for (const redirect of ['/%252F%252Fevil.example', '/%255Cevil.example', '/a\\b', `/${'a'.repeat(1100)}`]) expect(await landing(redirect)).toBeUndefined()
  })
})

describe('a crash between stored and answered', () => {
  it('a delivery that fails leaves no link that works (the handler saw it, nobody can use it)', async () => {
    const { password } = getAuthHandlers()
    const send = password!.sendVerificationCode!
    const links: string[] = []
    defineAuthHandlers({ password: { sendVerificationCode: (_email, _code, _action, details) => {
      links.push(details.link)
      throw new Error('mail server down')
    } } })
    const errors = vi.spyOn(app.ctx().logger, 'error').mockImplementation(() => {})
    try {
      await json(await browser().ask(account()))
      await vi.waitFor(() => expect(errors).toHaveBeenCalledWith('Sending a login link failed', expect.any(Error)))
    }
    finally {
      errors.mockRestore()
      defineAuthHandlers({ password: { sendVerificationCode: send } })
    }
    const token = new URLSearchParams(new URL(links[0]!).hash.slice(1)).get('token')!
    expect(await errorOf(await browser().redeem(token, true), 400)).toBe('invalid_magic_link')
  })

  it('a login that fails after the link was taken leaves it spent and no session (the user asks again)', async () => {
    const email = account()
    const asker = browser()
    await json(await asker.ask(email))
    const token = await linkOf(email)
    const { onUserPersist } = getAuthHandlers()
    defineAuthHandlers({ onUserPersist: () => {
      throw new Error('database down')
    } })
    try {
      const failed = await asker.redeem(token)
      expect(failed.status).toBe(500)
      expect(await failed.json()).not.toHaveProperty('redirect')
    }
    finally {
      defineAuthHandlers({ onUserPersist })
    }
    expect(await errorOf(await asker.redeem(token), 400)).toBe('invalid_magic_link')
  })
})
