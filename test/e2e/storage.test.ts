import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { cookie, issueCode, json, login, setCookieValue, startServer, type TestServer } from './server'

const REDIS_URL = 'redis://127.0.0.1:6379'
const prefix = `svc-e2e-${process.pid}-${Date.now()}:`
const redisEnv = { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'redis', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL: REDIS_URL, NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_PREFIX: prefix }

afterAll(async () => {
  const redis = new Redis(REDIS_URL)
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
    if (keys.length) await redis.del(...keys)
    cursor = next
  } while (cursor !== '0')
  await redis.quit()
})

async function withServers<T>(envs: Array<Record<string, string>>, fn: (servers: TestServer[]) => Promise<T>): Promise<T> {
  const servers = await Promise.all(envs.map(env => startServer(env)))
  try {
    return await fn(servers)
  }
  finally {
    await Promise.all(servers.map(s => s.stop()))
  }
}

const drivers: Array<[string, Record<string, string>]> = [
  ['memory', { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'memory' }],
  ['fs', { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'fs' }],
  ['redis', redisEnv],
]

describe.each(drivers)('single use with the %s driver', (_name, env) => {
  it('50 concurrent exchanges of one code give exactly one 200', async () => {
    await withServers([env], async ([server]) => {
      const code = await issueCode(server!)
      const results = await Promise.all(Array.from({ length: 50 }, () => server!.fetch('/auth/token', json({ code }))))
      const statuses = results.map(r => r.status)
      expect(statuses.filter(s => s === 200)).toHaveLength(1)
      expect(statuses.filter(s => s === 401)).toHaveLength(49)
    })
  })

  it('20 concurrent refreshes of one token rotate it exactly once', async () => {
    await withServers([env], async ([server]) => {
      const session = await login(server!)
      const results = await Promise.all(Array.from({ length: 20 }, () => server!.fetch('/auth/refresh', cookie(session.refreshCookie!))))
      expect(results.every(r => r.status === 200)).toBe(true)
      const rotated = results.map(r => setCookieValue(r, 'svc-refresh')).filter(Boolean)
      expect(rotated).toHaveLength(1)
      expect((await server!.fetch('/auth/refresh', cookie(rotated[0]!))).status).toBe(200)
    })
  })
})

describe('two server processes sharing Redis behave as one', () => {
  it('a code issued by one is exchanged once across both', async () => {
    await withServers([redisEnv, redisEnv], async ([a, b]) => {
      const code = await issueCode(a!)
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a! : b!).fetch('/auth/token', json({ code }))))
      expect(results.filter(r => r.status === 200)).toHaveLength(1)
    })
  })

  it('logout on one makes refresh fail on the other; rotation on one is seen by the other', async () => {
    await withServers([redisEnv, redisEnv], async ([a, b]) => {
      const session = await login(a!)
      const refreshed = await b!.fetch('/auth/refresh', cookie(session.refreshCookie!))
      expect(refreshed.status).toBe(200)
      const next = setCookieValue(refreshed, 'svc-refresh')!
      expect((await a!.fetch('/auth/refresh', cookie(next))).status).toBe(200)
      const other = await login(b!)
      expect((await a!.fetch('/auth/logout', cookie(other.refreshCookie!))).status).toBe(200)
      const res = await b!.fetch('/auth/refresh', cookie(other.refreshCookie!))
      expect(res.status).toBe(401)
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
    const first = await startServer({ NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'fs' })
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

    // A new process on the same records: every session whose newest cookie we know still works,
    // except one whose rotation was cut short by the kill (its answer never reached us).
    const second = await startServer({ NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'fs', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_BASE: first.dataDir })
    try {
      const results = await Promise.all(cookies.map(c => second.fetch('/auth/refresh', cookie(c))))
      const ok = results.filter(r => r.status === 200).length
      expect(results.every(r => r.status === 200 || r.status === 401)).toBe(true)
      expect(ok).toBeGreaterThanOrEqual(cookies.length - 2)
    }
    finally {
      await second.process.kill('SIGTERM')
      await first.stop()
    }
  })
})
