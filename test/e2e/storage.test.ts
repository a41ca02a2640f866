import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deleteRedisKeys, startRedisCluster } from '../support/redis-servers'
import { startUpstashRestServer } from '../helpers/upstash-rest-server.mjs'
import { testRedisUrl } from '../support/test-redis'
import { restartApp, setupApp } from './app'
import { bearer, cookie, issueCode, login, type Server, setCookieValue, tokenRequest } from './requests'
import { startServerProcess } from './server-processes'

/** The Redis the tests share (test/support/global-setup.ts). */
const REDIS_URL = testRedisUrl()
const prefix = `svc-e2e-${process.pid}-${Date.now()}:`
const redisEnv = { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'redis', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL: REDIS_URL, NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_PREFIX: prefix }

afterAll(() => deleteRedisKeys(prefix, REDIS_URL))

// Redis over HTTP: a loopback server speaking the Upstash REST protocol in front of the same Redis.
// The server processes find it through Upstash's own variables (the options' fallback).
const rest = await startUpstashRestServer({ token: `e2e-rest-${process.pid}-${Date.now()}`, redis: REDIS_URL })
afterAll(() => rest.close())
const upstashPrefix = `svc-e2e-upstash-${process.pid}-${Date.now()}:`
afterAll(() => deleteRedisKeys(upstashPrefix, REDIS_URL))
const upstashEnv = { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'upstash', UPSTASH_REDIS_REST_URL: rest.url, UPSTASH_REDIS_REST_TOKEN: rest.token, NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_PREFIX: upstashPrefix }

// Every test starts the app of this file afresh with the storage under test.
await setupApp('basic', {}, { server: false })

/**
 * Runs `fn` with the app restarted on `env` and, for each further environment, one more server
 * process beside it (stopped afterwards): two processes sharing one store.
 */
async function withServers<T>([env, ...more]: Array<Record<string, string>>, fn: (servers: Server[]) => Promise<T>): Promise<T> {
  const [app, ...others] = await Promise.all([restartApp(env), ...more.map(e => startServerProcess(e))])
  try {
    return await fn([app, ...others])
  }
  finally {
    await Promise.all(others.map(s => s.stop()))
  }
}

const drivers: Array<[string, Record<string, string>]> = [
  ['memory', { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'memory' }],
  ['fs', { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'fs' }],
  ['redis', redisEnv],
  ['upstash', upstashEnv],
]

describe.each(drivers)('single use with the %s driver', (_name, env) => {
  it('50 concurrent exchanges of one code give exactly one 200', async () => {
    await withServers([env], async ([server]) => {
      const code = await issueCode(server!)
      const results = await Promise.all(Array.from({ length: 50 }, () => server!.fetch('/auth/token', tokenRequest(code))))
      const statuses = results.map(r => r.status)
      expect(statuses.filter(s => s === 200)).toHaveLength(1)
      expect(statuses.filter(s => s === 401)).toHaveLength(49)
    })
  })

  it('50 concurrent refreshes of one cookie with no grace period: exactly one 200', async () => {
    await withServers([{ ...env, NUXT_SVC_AUTH_TOKEN_REFRESH_REUSE_GRACE_PERIOD: '0' }], async ([server]) => {
      const session = await login(server!)
      const results = await Promise.all(Array.from({ length: 50 }, () => server!.fetch('/auth/refresh', cookie(session.refreshCookie!))))
      const statuses = results.map(r => r.status)
      expect(statuses.filter(s => s === 200)).toHaveLength(1)
      expect(statuses.filter(s => s === 401)).toHaveLength(49)
    })
  })

  it('50 concurrent refreshes of one cookie within the grace period: all 200 with the one same successor', async () => {
    await withServers([env], async ([server]) => {
      const session = await login(server!)
      const results = await Promise.all(Array.from({ length: 50 }, () => server!.fetch('/auth/refresh', cookie(session.refreshCookie!))))
      expect(results.map(r => r.status)).toEqual(Array.from({ length: 50 }, () => 200))
      const successors = new Set(results.map(r => setCookieValue(r, 'svc-refresh')))
      expect(successors.size).toBe(1)
      const [successor] = [...successors]
      expect(successor).toMatch(/^[\w-]{43}$/)
      expect(successor).not.toBe(session.refreshCookie)
      expect((await server!.fetch('/auth/refresh', cookie(successor!))).status).toBe(200)
    })
  })
})

const clusterPrefix = `svc-e2e-cluster-${process.pid}-${Date.now()}:`

/**
 * The two-process tests run on a shared fs directory, one Redis, a Redis Cluster, and Redis over
 * HTTP. `revokedWithinMs`: how soon the other process refuses a revoked session's access token
 * (upstash has no broadcasts: it reloads the list when a check finds it older than 2 s).
 */
describe.each([
  ['an fs directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-auth-shared-'))
    return { env: { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'fs', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_BASE: dir }, stop: async () => rmSync(dir, { recursive: true, force: true }) }
  }],
  ['one Redis', async () => ({ env: redisEnv, stop: async () => {} })],
  ['a Redis Cluster', async () => {
    const cluster = await startRedisCluster(3)
    const env = { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'redis', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_CLUSTER: JSON.stringify(cluster.nodes), NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_PREFIX: clusterPrefix }
    return { env, stop: () => cluster.stop() }
  }],
  ['an upstash REST server (Redis over HTTP)', async () => ({
    env: { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'upstash', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL: rest.url, NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_TOKEN: rest.token, NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_PREFIX: upstashPrefix },
    stop: async () => {},
    revokedWithinMs: 3000,
  })],
] as const)('two server processes sharing %s behave as one', (_name, setup) => {
  let shared: Record<string, string> = {}
  let stop: (() => Promise<void>) | undefined
  let revokedWithinMs = 1000
  beforeAll(async () => {
    const started: { env: Record<string, string>, stop: () => Promise<void>, revokedWithinMs?: number } = await setup()
    shared = started.env
    stop = started.stop
    revokedWithinMs = started.revokedWithinMs ?? revokedWithinMs
  }, 90_000)
  afterAll(() => stop?.(), 30_000)

  it('no grace period: of 50 concurrent refreshes split over both, exactly one 200', async () => {
    const env = { ...shared, NUXT_SVC_AUTH_TOKEN_REFRESH_REUSE_GRACE_PERIOD: '0' }
    await withServers([env, env], async ([a, b]) => {
      const session = await login(a!)
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a! : b!).fetch('/auth/refresh', cookie(session.refreshCookie!))))
      expect(results.filter(r => r.status === 200)).toHaveLength(1)
      expect(results.filter(r => r.status === 401)).toHaveLength(49)
    })
  })

  it('with a grace period: every answer carries the same successor', async () => {
    await withServers([shared, shared], async ([a, b]) => {
      const session = await login(a!)
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a! : b!).fetch('/auth/refresh', cookie(session.refreshCookie!))))
      expect(results.every(r => r.status === 200)).toBe(true)
      expect(new Set(results.map(r => setCookieValue(r, 'svc-refresh'))).size).toBe(1)
    })
  })

  it('a code issued by one is exchanged once across both', async () => {
    await withServers([shared, shared], async ([a, b]) => {
      const code = await issueCode(a!)
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a! : b!).fetch('/auth/token', tokenRequest(code))))
      expect(results.filter(r => r.status === 200)).toHaveLength(1)
    })
  })

  it('logout on one makes refresh fail and the access token refused on the other; rotation on one is seen by the other', async () => {
    await withServers([shared, shared], async ([a, b]) => {
      const session = await login(a!)
      const refreshed = await b!.fetch('/auth/refresh', cookie(session.refreshCookie!))
      expect(refreshed.status).toBe(200)
      const next = setCookieValue(refreshed, 'svc-refresh')!
      expect((await a!.fetch('/auth/refresh', cookie(next))).status).toBe(200)
      const other = await login(b!)
      expect((await a!.fetch('/api/user/me', bearer(other.token))).status).toBe(200)
      expect((await a!.fetch('/auth/logout', cookie(other.refreshCookie!))).status).toBe(200)
      const since = Date.now()
      const res = await b!.fetch('/auth/refresh', cookie(other.refreshCookie!))
      expect(res.status).toBe(401)
      for (;;) {
        const me = await b!.fetch('/api/user/me', bearer(other.token))
        if (me.status === 401) break
        expect(Date.now() - since).toBeLessThan(revokedWithinMs)
        await new Promise(resolve => setTimeout(resolve, 20))
      }
    })
  })
})

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })
}

describe('fs driver crash safety', () => {
  it('SIGKILL in the middle of a run of refreshes leaves every record readable', async () => {
    const first = await startServerProcess({ NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'fs' })
    const sessions = await Promise.all(Array.from({ length: 20 }, (_, i) => login(first, { sub: `crash-${i}`, name: `Crash ${i}` })))
    const cookies = sessions.map(s => s.refreshCookie!)
    let stop = false
    const loops = cookies.map(async (_c, i) => {
      while (!stop) {
        const res = await first.fetch('/auth/refresh', cookie(cookies[i]!)).catch(() => undefined)
        if (!res) return
        const next = res.status === 200 ? setCookieValue(res, 'svc-refresh') : undefined
        if (next) cookies[i] = next
      }
    })
    await new Promise(r => setTimeout(r, 700))
    first.process.kill('SIGKILL')
    stop = true
    await Promise.all(loops)
    await new Promise(r => first.process.exitCode !== null || first.process.signalCode ? r(null) : first.process.once('exit', r))

    const files = filesUnder(first.dataDir).filter(f => !f.endsWith('.tmp'))
    expect(files.length).toBeGreaterThan(20)
    for (const file of files) expect(() => JSON.parse(readFileSync(file, 'utf8')), file).not.toThrow()

    // A new process on the same records: every session still works with the newest cookie we
    // know, also one whose rotation was cut short by the kill (its answer never reached us: the
    // retry within the grace period gets the successor that was claimed).
    const second = await startServerProcess({ NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'fs', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_BASE: first.dataDir })
    try {
      const results = await Promise.all(cookies.map(c => second.fetch('/auth/refresh', cookie(c))))
      expect(results.map(r => r.status)).toEqual(cookies.map(() => 200))
    }
    finally {
      await second.stop()
      await first.stop()
    }
  })
})
