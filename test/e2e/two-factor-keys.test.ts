import { Secret, TOTP } from 'otpauth'
import { afterEach, describe, expect, it } from 'vitest'
import { startServerProcess, type ServerProcess } from './server-processes'

// The two-factor key options on the built client fixture (twoFactor.enabled, no twoFactor.secret in
// its config), given through the environment as a deployment gives them.
const TOKEN_SECRET = 'client-fixture-secret-0123456789-abcdefghij'
const TWO_FACTOR_SECRET = 'two-factor-keys-e2e-secret-0123456789-abcdefg'
const PASSWORD = 'Sunflower-42x'
const WARNING = 'svcAuth.twoFactor.secret is not set: rotating token.secret would make the second factors unreadable: set twoFactor.secret'

const servers: ServerProcess[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map(server => server.stop()))
})

async function start(env: Record<string, string>): Promise<ServerProcess> {
  const server = await startServerProcess({ NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false', ...env }, 'client')
  servers.push(server)
  // The context is created when the server starts: let its warnings reach the output.
  await server.fetch('/auth/two-factor/status')
  return server
}

async function ok<T>(res: Response, status = 200): Promise<T> {
  const text = await res.text()
  expect(res.status, text).toBe(status)
  return (text ? JSON.parse(text) : undefined) as T
}

describe('twoFactor.secret on a built server', () => {
  it('from NUXT_SVC_AUTH_TWO_FACTOR_SECRET: no warning, and enrolment, codes and recovery codes work', async () => {
    const server = await start({ NUXT_SVC_AUTH_TWO_FACTOR_SECRET: TWO_FACTOR_SECRET, NUXT_SVC_AUTH_TWO_FACTOR_PREVIOUS_SECRETS: JSON.stringify([TOKEN_SECRET]) })
    const email = `tf-keys-${Date.now()}@example.com`
    const jar = new Map<string, string>()
    const post = async (path: string, body: unknown, bearer?: string) => {
      const headers: Record<string, string> = { 'accept': 'application/json', 'content-type': 'application/json', 'cookie': [...jar].map(([k, v]) => `${k}=${v}`).join('; ') }
      if (bearer) headers.authorization = `Bearer ${bearer}`
      const res = await server.fetch(path, { method: 'POST', headers, body: JSON.stringify(body) })
      for (const line of res.headers.getSetCookie()) {
        const [name, ...value] = line.split(';')[0]!.split('=')
        if (value.join('=')) jar.set(name!, value.join('='))
        else jar.delete(name!)
      }
      return res
    }
    const emailed = async (action: string) => (await ok<{ code: string }>(await server.fetch(`/api/test/codes?email=${encodeURIComponent(email)}&action=${action}`))).code
    const exchange = async (redirect: string) => (await ok<{ accessToken: string }>(await post('/auth/token', { code: new URL(redirect, server.url).searchParams.get('code') }))).accessToken

    await ok(await post('/auth/password/register', { email, password: PASSWORD }))
    const token = await exchange((await ok<{ redirect: string }>(await post('/auth/password/register-verify', { email, code: await emailed('register') }))).redirect)
    const { secret } = await ok<{ secret: string }>(await post('/auth/two-factor/enrol', {}, token))
    const totp = (offset: number) => new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + offset * 30_000 })
    const { recoveryCodes } = await ok<{ recoveryCodes: string[] }>(await post('/auth/two-factor/confirm', { code: totp(-1) }, token))

    const login = async () => {
      await ok(await post('/auth/password/login', { email, password: PASSWORD }))
      const { redirect } = await ok<{ redirect: string }>(await post('/auth/password/login-verify', { email, code: await emailed('login') }))
      expect(redirect).toMatch(/^\/auth\/second-factor\?flow=/)
      return new URL(redirect, server.url).searchParams.get('flow')!
    }
    await ok(await post('/auth/two-factor/verify', { flow: await login(), code: totp(0) }))
    await ok(await post('/auth/two-factor/verify', { flow: await login(), recoveryCode: recoveryCodes[0] }))

    expect(server.output()).not.toContain('twoFactor.secret')
    for (const key of [TWO_FACTOR_SECRET, TOKEN_SECRET, secret, ...recoveryCodes]) expect(server.output()).not.toContain(key)
  })

  it('without it, the server warns once, in one line, when it starts', async () => {
    const server = await start({})
    const lines = server.output().split('\n').filter(line => line.includes('twoFactor.secret'))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(WARNING)
  })

  it('a short key, or token.secret itself, stops the module with a clear error (JSON 500, no stack)', async () => {
    for (const [value, message] of [['short', 'svcAuth.twoFactor.secret must be at least 32 bytes long'], [TOKEN_SECRET, 'svcAuth.twoFactor.secret must not be token.secret']] as const) {
      const server = await start({ NUXT_SVC_AUTH_TWO_FACTOR_SECRET: value })
      const res = await server.fetch('/auth/two-factor/status', { headers: { accept: 'application/json' } })
      expect(res.status).toBe(500)
      expect(await res.json()).toEqual({ statusCode: 500, message: expect.any(String), error: 'internal_error' })
      expect(server.output()).toContain(message)
      expect(server.output()).not.toContain(TOKEN_SECRET)
    }
  })
})
