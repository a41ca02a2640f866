import { execFile } from 'node:child_process'
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { setupApp } from './app'
import { json, type Server } from './requests'
import { startServerProcess, type ServerProcess } from './server-processes'
import { testRedisUrl } from '../support/test-redis'
import { deleteRedisKeys } from '../support/redis-servers'

// Native apps against a built app (the oauth fixture lists com.example.app:/callback and the loopback
// http://127.0.0.1/callback): the example client end to end, and one native session on two processes.
const MOCK = { NUXT_SVC_AUTH_PROVIDERS_MOCK_ENABLE_IN_PRODUCTION: 'true' }
const server = await setupApp('oauth', MOCK)
const run = promisify(execFile)
const EXAMPLE = resolve(import.meta.dirname, '../../examples/native-client.mjs')

interface Tokens { accessToken: string, refreshToken: string, expiresIn: number, refreshExpiresIn: number }

/** A native login through the mock provider to the custom-scheme URI: the code and its verifier. */
async function nativeCode(target: Server): Promise<{ code: string, verifier: string }> {
  const verifier = randomBytes(32).toString('base64url')
  const query = new URLSearchParams({ redirect_uri: 'com.example.app:/callback', code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256', state: 'e2e' })
  const cookies: string[] = []
  let path = `/auth/native/login/mock?${query}`
  for (let hop = 0; hop < 4; hop++) {
    const res = await target.fetch(path, { headers: { cookie: cookies.join('; ') } })
    cookies.push(...res.headers.getSetCookie().map(line => line.split(';')[0]!))
    const location = res.headers.get('location')!
    expect(res.status, location).toBe(302)
    if (location.startsWith('com.example.app:')) {
      const back = new URL(location)
      expect(back.searchParams.get('state')).toBe('e2e')
      return { code: back.searchParams.get('code')!, verifier }
    }
    path = location
  }
  throw new Error('no redirect to the app')
}

async function answer<T>(res: Response, status = 200): Promise<T> {
  const body = await res.json() as T
  expect(res.status, JSON.stringify(body)).toBe(status)
  return body
}

describe('the example native client', () => {
  it('logs in through the system browser\'s redirects, exchanges, refreshes and logs out', async () => {
    const { stdout } = await run(process.execPath, [EXAMPLE, server.url, 'mock'], { timeout: 30_000 })
    const steps = Object.fromEntries(stdout.trim().split('\n').map(line => JSON.parse(line) as { step: string }).map(step => [step.step, step]))
    expect(steps.redirected).toBeDefined()
    expect(steps.token).toMatchObject({ expiresIn: 3600, refreshExpiresIn: 604800 })
    expect(steps.user).toMatchObject({ sub: 'mock:mock-user', email: 'user@example.com' })
    expect(steps.refresh).toMatchObject({ rotated: true })
    expect(steps.logout).toMatchObject({ refreshAfterLogout: 401 })
    // No token in its output beyond a short prefix.
    expect(stdout).not.toMatch(/[\w-]{20,}/)
  })

  it('refuses a browser\'s request to the native endpoints on the built app', async () => {
    const { code, verifier } = await nativeCode(server)
    const res = await server.fetch('/auth/native/token', json({ code, codeVerifier: verifier }, { origin: server.url }))
    expect((await answer<{ error: string }>(res, 403)).error).toBe('browser_request')
    // The code was not looked at: it still works.
    await answer(await server.fetch('/auth/native/token', json({ code, codeVerifier: verifier })))
  })
})

describe('two processes sharing Redis', () => {
  const prefix = `svc-auth-test:${randomUUID()}:`
  const processes: ServerProcess[] = []
  afterAll(async () => {
    await Promise.all(processes.map(p => p.stop()))
    await deleteRedisKeys(prefix)
  })

  it('share a native session: a login on one refreshes on the other, and a logout on either ends it', async () => {
    const env = { ...MOCK, NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'redis', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL: testRedisUrl(), NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_PREFIX: prefix }
    const [a, b] = await Promise.all([startServerProcess(env, 'oauth'), startServerProcess(env, 'oauth')])
    processes.push(a, b)
    const { code, verifier } = await nativeCode(a)
    const first = await answer<Tokens>(await b.fetch('/auth/native/token', json({ code, codeVerifier: verifier })))
    // The same token used on both at once: one successor.
    const [onA, onB] = await Promise.all([a, b].map(async p => answer<Tokens>(await p.fetch('/auth/native/refresh', json({ refreshToken: first.refreshToken })))))
    expect(onA!.refreshToken).toBe(onB!.refreshToken)
    const next = await answer<Tokens>(await a.fetch('/auth/native/refresh', json({ refreshToken: onB!.refreshToken })))
    expect(await answer(await b.fetch('/auth/native/logout', json({ refreshToken: first.refreshToken })))).toEqual({ success: true })
    expect((await answer<{ error: string }>(await a.fetch('/auth/native/refresh', json({ refreshToken: next.refreshToken })), 401)).error).toBe('invalid_refresh_token')
  })
})
