import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { restartApp, setupApp } from './app'
import { compareTimings, timingsWithin } from '../support/timing'
import { sha1, startRangeApi, type RangeApi } from '../support/range-api'
import { nextCode, PASSWORD, post, registerUser, sentCodes, uniqueEmail } from './password-helpers'

// The built password fixture with the breach check (against a loopback fake of the range API) and
// registration that does not reveal accounts, both set through the runtime config's environment.
await setupApp('password', {}, { server: false })

const BREACHED_PASSWORD = 'Correct-Horse-9'
let api: RangeApi
beforeAll(async () => {
  api = await startRangeApi()
  api.state.mode = { kind: 'counts', counts: { [sha1(BREACHED_PASSWORD)]: 12 }, padding: 30 }
})
afterAll(() => api?.close())

const start = () => restartApp({
  NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false',
  FIXTURE_SEND_DELAY_MS: '40',
  NUXT_SVC_AUTH_PROVIDERS_PASSWORD_REVEAL_EXISTING_ACCOUNTS: 'false',
  NUXT_SVC_AUTH_PROVIDERS_PASSWORD_BREACH_CHECK_ENABLED: 'true',
  NUXT_SVC_AUTH_PROVIDERS_PASSWORD_BREACH_CHECK_URL: api.url,
})

describe('password options from the environment of a built server', () => {
  it('refuses a breached password at register, sending the range API only a prefix', async () => {
    const server = await start()
    api.requests.length = 0
    const res = await post(server, '/auth/password/register', { email: uniqueEmail('pwned'), password: BREACHED_PASSWORD })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: 'password_policy', message: expect.stringContaining('data breaches') })
    expect(api.requests.map(r => r.url)).toEqual([`/range/${sha1(BREACHED_PASSWORD).slice(0, 5)}`])
  })

  it('answers register alike for an existing address, tells its owner without a code, and in the same time', async () => {
    const server = await start()
    const owner = uniqueEmail('owner')
    await registerUser(server, owner)
    const existing = await post(server, '/auth/password/register', { email: owner, password: PASSWORD })
    const unknown = await post(server, '/auth/password/register', { email: uniqueEmail('new'), password: PASSWORD })
    expect([existing.status, await existing.text()]).toEqual([unknown.status, await unknown.text()])
    expect(existing.headers.getSetCookie()).toEqual(unknown.headers.getSetCookie())
    await nextCode(server, owner, 'account_exists')
    expect((await sentCodes(server, owner, 'account_exists')).map(m => m.code)).toEqual([''])
    const gap = await compareTimings({
      a: () => post(server, '/auth/password/register', { email: owner, password: PASSWORD }),
      b: () => post(server, '/auth/password/register', { email: uniqueEmail('new'), password: PASSWORD }),
    })
    expect(timingsWithin(gap), JSON.stringify(gap)).toBe(true)
  })
})
