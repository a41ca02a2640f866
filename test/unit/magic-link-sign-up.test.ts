import { describe, expect, it, vi } from 'vitest'
import { errorOf, json, magicLinkApp } from './helpers/magic-link-app'
import { defineAuthHandlers, getAuthHandlers } from '../../src/runtime/server/lib/core/handlers'

// With sign-up allowed and a second factor required of everyone, on the memory store.
vi.mock('nitropack/runtime', () => import('./helpers/nitro-stub'))

const app = magicLinkApp('memory', {
  logging: { level: 'silent', security: true },
  providers: { password: { passwordHashRounds: 4 }, magicLink: { allowSignUp: true } },
  twoFactor: { enabled: true, requireForAll: true, secret: 'magic-link-two-factor-secret-0123456789ab' },
})

describe('allowSignUp', () => {
  it('sends a link to an address without an account; its login creates the account through onUserPersist', async () => {
    defineAuthHandlers({ twoFactor: { find: () => null, save: () => {}, isRequired: () => false } })
    const email = 'newcomer@example.com'
    const asker = app.browser()
    await json(await asker.ask(email))
    const token = await app.linkOf(email)
    expect(app.host.users.has(email)).toBe(false)
    const { redirect } = await json<{ redirect: string }>(await asker.redeem(token))
    expect(app.host.persisted.filter(p => p.user.email === email)).toEqual([{ provider: 'magicLink', user: expect.objectContaining({ email, emailVerified: true }) }])
    expect(await asker.exchange(redirect)).toMatchObject({ sub: `new-${email}`, email })
  })
})

describe('security events', () => {
  it('a refused link is a login failure of provider magicLink; a link login\'s session starts a login success', async () => {
    defineAuthHandlers({ twoFactor: { find: () => null, save: () => {}, isRequired: () => false } })
    const email = app.account()
    const asker = app.browser()
    await json(await asker.ask(email))
    const token = await app.linkOf(email)
    const security = vi.spyOn(app.ctx().logger, 'security')
    expect(await errorOf(await asker.redeem('B'.repeat(43)), 400)).toBe('invalid_magic_link')
    expect(security).toHaveBeenLastCalledWith('login', expect.objectContaining({ outcome: 'failure', details: { provider: 'magicLink', reason: 'invalid_link' } }))
    const { redirect } = await json<{ redirect: string }>(await asker.redeem(token))
    await asker.exchange(redirect)
    expect(security).toHaveBeenLastCalledWith('login', expect.objectContaining({ outcome: 'success', actor: `id-${email}`, details: expect.objectContaining({ provider: 'magicLink' }) }))
  })
})

describe('second factor', () => {
  it('is asked after the link: the answer is the second-factor page, no authorization code', async () => {
    defineAuthHandlers({ twoFactor: { find: () => null, save: () => {}, isRequired: () => true } })
    const email = app.account()
    const asker = app.browser()
    await json(await asker.ask(email))
    const { redirect } = await json<{ redirect: string }>(await asker.redeem(await app.linkOf(email)))
    expect(redirect).toMatch(/^\/auth\/second-factor\?flow=[\w-]+&enrol=1$/)
    expect(await errorOf(await asker.send('POST', '/auth/token', { code: 'x' }), 401)).toBe('invalid_code')
  })
})

describe('allowSignUp without a global onUserPersist', () => {
  it('creates no session when only the password provider\'s onUserPersist(email, hash) is registered (it stores hashes only)', async () => {
    const global = getAuthHandlers().onUserPersist
    const stored: string[] = []
    defineAuthHandlers({ onUserPersist: undefined, password: { onUserPersist: email => void stored.push(email) } })
    const errors = vi.spyOn(app.ctx().logger, 'error').mockImplementation(() => {})
    try {
      const email = 'hash-only@example.com'
      const asker = app.browser()
      await json(await asker.ask(email))
      const res = await asker.redeem(await app.linkOf(email))
      expect(res.status).toBe(500)
      expect(stored).toEqual([])
      expect(app.host.users.has(email)).toBe(false)
    }
    finally {
      errors.mockRestore()
      defineAuthHandlers({ onUserPersist: global, password: { onUserPersist: undefined } })
    }
  })
})
