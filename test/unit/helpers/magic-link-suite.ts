import { describe, expect, it, vi } from 'vitest'
import { errorOf, json, magicLinkApp, type MagicLinkDriver } from './magic-link-app'
import { MESSAGES } from '../../../src/runtime/server/lib/edge/messages'
import { magicLinkKey, readMagicLink } from '../../../src/runtime/magic-link/server/magic-link-records'

/**
 * The magic-link routes with the store on `driver`: same answer for every address, single use under concurrency,
 * expiry, scanners, the same and another device, the short code's limits, rate limits, and what is stored.
 * One call per test file: the file mocks `nitropack/runtime` with nitro-stub.ts.
 */
export function magicLinkSuite(driver: MagicLinkDriver): void {
  const app = magicLinkApp(driver)
  const { host, browser, account, linkOf } = app

  /** A new account whose link was asked for in `asker` (landing on `redirect`): its address and the link's token. */
  async function asked(fields: Parameters<typeof account>[0] = {}, redirect?: string) {
    const email = account(fields)
    const asker = browser()
    await json(await asker.ask(email, redirect))
    return { email, asker, token: await linkOf(email) }
  }

  describe('POST /auth/magic-link', () => {
    it('answers a known and an unknown address alike, before the lookup; only the known one gets a link', async () => {
      const known = account()
      const unknown = `nobody-${known}`
      let open = () => {}
      host.gate = new Promise<void>((resolve) => {
        open = resolve
      })
      try {
        // The lookups are held back: both answers come while they wait (neither answer nor its timing depends on them).
        const answers = await Promise.all([browser().ask(known), browser().ask(unknown)])
        const bodies = await Promise.all(answers.map(res => res.json()))
        expect(answers.map(res => res.status)).toEqual([200, 200])
        expect(bodies[0]).toEqual({ success: true, message: MESSAGES.magic_link_requested })
        expect(bodies[1]).toEqual(bodies[0])
        expect(host.sent.filter(m => m.email === known || m.email === unknown)).toEqual([])
        await vi.waitFor(() => expect(host.lookups).toEqual(expect.arrayContaining([known, unknown])))
      }
      finally {
        host.gate = undefined
        open()
      }
      await linkOf(known)
      // The unknown address's lookup ended with nothing to send (no sign-up).
      await new Promise(resolve => setTimeout(resolve, 50))
      expect(host.sent.filter(m => m.email === unknown)).toEqual([])
      const [message] = host.sent.filter(m => m.email === known)
      expect(message).toMatchObject({ action: 'magic_link', code: '' })
      expect(message!.link).toMatch(/^https:\/\/app\.example\.com\/auth\/magic-link\/open#token=[\w-]{43}$/)
    })

    it('sets the HttpOnly, SameSite=Lax, __Host- code cookie that recognises the browser, for every address', async () => {
      for (const email of [account(), 'unknown-cookie@example.com']) {
        const res = await browser().ask(email)
        const cookie = res.headers.getSetCookie().find(line => line.startsWith('__Host-svc-code='))
        expect(cookie).toMatch(/HttpOnly/i)
        expect(cookie).toMatch(/SameSite=Lax/i)
        expect(cookie).toMatch(/Secure/i)
        expect(cookie).toMatch(/Path=\//)
      }
    })

    it('limits requests per address asked for and per client address (429 rate_limited)', async () => {
      const email = account()
      for (let i = 0; i < 3; i++) await json(await browser().ask(email))
      expect(await errorOf(await browser().ask(email), 429)).toBe('rate_limited')
      const client = browser()
      for (let i = 0; i < 6; i++) await json(await client.ask(account()))
      const refused = await client.ask(account())
      expect(await errorOf(refused, 429)).toBe('rate_limited')
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    })

    it('refuses a malformed address (400 invalid_email) and a body that is not the schema (400 bad_request)', async () => {
      expect(await errorOf(await browser().ask('not-an-email'), 400)).toBe('invalid_email')
      expect(await errorOf(await browser().send('POST', '/auth/magic-link', { email: 'x'.repeat(1000) }), 400)).toBe('bad_request')
    })
  })

  describe('the same device', () => {
    it('logs the browser that asked in through an authorization code bound to it; the link is spent', async () => {
      const { asker, token } = await asked({ name: 'Same Device' }, '/dashboard')
      const { redirect } = await json<{ redirect: string }>(await asker.redeem(token))
      expect(redirect).toMatch(/^\/auth\/callback\?code=/)
      // Bound to this browser: another cannot exchange it.
      const code = new URL(redirect, 'http://x').searchParams.get('code')!
      expect(await errorOf(await browser().send('POST', '/auth/token', { code }), 401)).toBe('code_binding_mismatch')
      expect(await errorOf(await asker.redeem(token), 400)).toBe('invalid_magic_link')
    })

    it('goes through the login pipeline: onUserPersist with provider magicLink, a verified email, the account\'s id', async () => {
      const { email, asker, token } = await asked({ name: 'Pipeline' }, '/dashboard')
      const { redirect } = await json<{ redirect: string }>(await asker.redeem(token))
      const claims = await asker.exchange(redirect)
      expect(claims).toMatchObject({ sub: `id-${email}`, email, name: 'Pipeline' })
      const persisted = host.persisted.filter(p => p.user.email === email)
      expect(persisted).toHaveLength(1)
      expect(persisted[0]).toMatchObject({ provider: 'magicLink', user: { email, emailVerified: true, sub: `id-${email}` } })
      expect(persisted[0]!.user).not.toHaveProperty('hashedPassword')
      const successes = app.nitro.hooks.filter(([name, payload]) => name === 'svc:success' && (payload as { user: { email?: string } }).user.email === email)
      expect(successes.map(([, payload]) => (payload as { provider: string }).provider)).toEqual(['magicLink'])
    })
  })

  describe('an account without a password', () => {
    it('logs in by link; the password routes treat it as having no password', async () => {
      const { email, asker, token } = await asked()
      const { redirect } = await json<{ redirect: string }>(await asker.redeem(token))
      const { raw } = await asker.exchange(redirect)
      expect(await errorOf(await browser().send('POST', '/auth/password/login', { email, password: 'Sunflower-42x' }), 400)).toBe('invalid_credentials')
      expect(await errorOf(await asker.send('POST', '/auth/password/change', { currentPassword: 'Sunflower-42x', newPassword: 'Marigold-77y!' }, raw), 400)).toBe('no_password_account')
    })
  })

  describe('another device', () => {
    it('shows a short code and logs nobody in there; typed into the browser that asked, it logs that one in', async () => {
      const { email, asker, token } = await asked()
      const phone = browser()
      const answer = await json<{ success: true, code: string }>(await phone.redeem(token))
      // The account is named (a link someone else sent is recognised before the button is pressed).
      expect(answer).toEqual({ success: true, code: expect.stringMatching(/^\d{6}$/), email })
      expect(phone.jar.has('__Host-svc-code')).toBe(false)
      const { redirect } = await json<{ redirect: string }>(await asker.enterCode(email, answer.code))
      expect(await asker.exchange(redirect)).toMatchObject({ sub: `id-${email}` })
      // Spent: neither the link nor the code works again.
      expect(await errorOf(await phone.redeem(token, true), 400)).toBe('invalid_magic_link')
      expect(await errorOf(await asker.enterCode(email, answer.code), 400)).toBe('invalid_verification_code')
    })

    it('"log in on this device" logs the opening browser in; the short code shown before is dead', async () => {
      const { email, asker, token } = await asked()
      const phone = browser()
      const { code } = await json<{ code: string }>(await phone.redeem(token))
      const { redirect } = await json<{ redirect: string }>(await phone.redeem(token, true))
      expect(await phone.exchange(redirect)).toMatchObject({ sub: `id-${email}` })
      expect(await errorOf(await asker.enterCode(email, code), 400)).toBe('invalid_verification_code')
    })

    it('refuses the code in a browser that did not ask; the link stays for the one that did', async () => {
      const { email, asker, token } = await asked()
      const phone = browser()
      const first = await json<{ code: string }>(await phone.redeem(token))
      expect(await errorOf(await browser().enterCode(email, first.code), 400)).toBe('invalid_verification_code')
      const second = await json<{ code: string }>(await phone.redeem(token))
      const { redirect } = await json<{ redirect: string }>(await asker.enterCode(email, second.code))
      expect(redirect).toMatch(/^\/auth\/callback\?code=/)
    })

    it('limits wrong codes: past the attempts even the right code is refused (too_many_attempts)', async () => {
      const { email, asker, token } = await asked()
      const { code } = await json<{ code: string }>(await browser().redeem(token))
      const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0')
      for (let i = 0; i < 4; i++) expect(await errorOf(await asker.enterCode(email, wrong), 400)).toBe('invalid_verification_code')
      expect(await errorOf(await asker.enterCode(email, wrong), 400)).toBe('too_many_attempts')
      expect(await errorOf(await asker.enterCode(email, code), 400)).toBe('too_many_attempts')
    })
  })

  describe('single use and scanners', () => {
    it('50 concurrent spends of one link: exactly one login', async () => {
      const email = account()
      await json(await browser().ask(email))
      const token = await linkOf(email)
      const opener = browser()
      const answers = await Promise.all(Array.from({ length: 50 }, () => opener.redeem(token, true)))
      expect(answers.filter(res => res.status === 200)).toHaveLength(1)
      const refused = await Promise.all(answers.filter(res => res.status !== 200).map(res => errorOf(res, 400)))
      expect(refused).toEqual(Array.from({ length: 49 }, () => 'invalid_magic_link'))
    })

    it('GET and HEAD of the link, and a script that opens it elsewhere, spend nothing: the asker still logs in', async () => {
      const { email, asker, token } = await asked()
      const scanner = browser()
      for (let i = 0; i < 3; i++) {
        for (const method of ['GET', 'HEAD']) {
          expect((await scanner.send(method, `/auth/magic-link/open?token=${token}`)).status).not.toBe(200)
          expect((await scanner.send(method, `/auth/magic-link/redeem?token=${token}`)).status).not.toBe(200)
        }
        await json(await scanner.redeem(token))
      }
      const { redirect } = await json<{ redirect: string }>(await asker.redeem(token))
      expect(await asker.exchange(redirect)).toMatchObject({ sub: `id-${email}` })
    })

    it('a link lives `ttl` (10 minutes); an expired one is refused (invalid_magic_link)', async () => {
      const { asker, token } = await asked()
      const ctx = app.ctx()
      const key = magicLinkKey(ctx, token)
      expect(await ctx.store.ttl(key)).toBeGreaterThan(590)
      expect(await ctx.store.ttl(key)).toBeLessThanOrEqual(600)
      // The same record, expiring in a second (the driver's own expiry, Redis's included).
      await ctx.store.write(key, (await readMagicLink(ctx, key))!, 1)
      await new Promise(resolve => setTimeout(resolve, 1100))
      expect(await errorOf(await asker.redeem(token), 400)).toBe('invalid_magic_link')
    })

    it('an unknown or malformed token is refused (400)', async () => {
      expect(await errorOf(await browser().redeem('A'.repeat(43)), 400)).toBe('invalid_magic_link')
      expect(await errorOf(await browser().redeem('A'.repeat(500)), 400)).toBe('bad_request')
    })

    it('stores neither the link\'s token nor the short code in keys or values (HMACs only)', async () => {
      const email = account()
      await json(await browser().ask(email))
      const token = await linkOf(email)
      const { code } = await json<{ code: string }>(await browser().redeem(token))
      const backend = app.ctx().backend
      const entries = await Promise.all((await backend.keys('')).map(async key => [key, (await backend.get(key).catch(() => '')) ?? ''] as const))
      expect(entries.length).toBeGreaterThan(0)
      for (const [key, value] of entries) {
        for (const secret of [token, `magic_link:${code}`, `:${code}`]) {
          expect(key).not.toContain(secret)
          expect(value).not.toContain(secret)
        }
      }
    })
  })
}
