import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { startServerProcess, type ServerProcess } from './server-processes'
import { rememberCodeCookie, tokenRequest } from './requests'
import { deleteRedisKeys } from '../support/redis-servers'
import { testRedisUrl } from '../support/test-redis'

// Two processes of one built app (test/fixtures/client, `audit` on) share one store, on fs (one
// directory) and on Redis: 50 logins at once, spread over both, each append one event of the chain.
// Afterwards each process reads the chain whole, verified, with every login in it.

const processes: ServerProcess[] = []
const cleanups: Array<() => Promise<void> | void> = []
afterAll(async () => {
  await Promise.all(processes.map(server => server.stop()))
  for (const cleanup of cleanups) await cleanup()
}, 30_000)

/** One login through the fixture's test route and the code exchange (the audit log's `login` success). */
async function login(server: ServerProcess, user: 'alice' | 'bob'): Promise<string> {
  const started = await server.fetch(`/api/test/login?user=${user}`)
  const code = new URL(started.headers.get('location') ?? '', server.url).searchParams.get('code') ?? ''
  rememberCodeCookie(started, code)
  const exchanged = await server.fetch('/auth/token', tokenRequest(code))
  expect(exchanged.status).toBe(200)
  return ((await exchanged.json()) as { accessToken: string }).accessToken
}

describe.each(['fs', 'redis'] as const)('the audit log of 2 processes sharing %s', (driver) => {
  it('50 concurrent logins, 25 at each: the chain verifies at both and holds every login', async () => {
    let env: Record<string, string>
    if (driver === 'fs') {
      const base = mkdtempSync(join(tmpdir(), 'svc-auth-e2e-audit-'))
      cleanups.push(() => rmSync(base, { recursive: true, force: true }))
      env = { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_BASE: base }
    }
    else {
      const prefix = `svc-auth-e2e-audit:${randomUUID()}:`
      cleanups.push(() => deleteRedisKeys(prefix))
      env = { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'redis', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL: testRedisUrl(), NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_PREFIX: prefix }
    }
    const pair = await Promise.all([startServerProcess(env, 'client'), startServerProcess(env, 'client')])
    processes.push(...pair)

    await Promise.all(Array.from({ length: 50 }, (_, i) => login(pair[i % 2]!, 'bob')))
    const admin = await login(pair[0]!, 'alice')

    for (const server of pair) {
      const verified = (await (await server.fetch('/api/test/audit-verify')).json()) as { ok: boolean, checked: number }
      expect(verified).toMatchObject({ ok: true })
      expect(verified.checked).toBeGreaterThanOrEqual(51)
    }
    const logins: unknown[] = []
    let cursor: string | undefined
    do {
      const page = await pair[1]!.fetch(`/auth/audit?type=login&user=bob${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: { authorization: `Bearer ${admin}` } })
      expect(page.status).toBe(200)
      const body = (await page.json()) as { events: Array<{ outcome: string, subject: string }>, cursor?: string | null }
      logins.push(...body.events.filter(event => event.outcome === 'success' && event.subject === 'bob'))
      cursor = body.cursor ?? undefined
    } while (cursor)
    expect(logins).toHaveLength(50)
  }, 120_000)
})
