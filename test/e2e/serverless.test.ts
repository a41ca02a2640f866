import { describe, expect, it } from 'vitest'
import { deployedSessionFlow } from './deployed-flow'
import type { Server } from './requests'
import { startServerProcess, type ServerProcess } from './server-processes'
import { startRedisTls } from '../support/redis-servers'
import { startUpstashStorage } from './upstash-storage'

/**
 * Two instances of the function behind one address, taking requests in turn as a platform
 * spreads them: every step of a session lands on another instance than the one before, so
 * only what the shared storage holds carries a session.
 */
function roundRobin(instances: readonly ServerProcess[]): Server {
  let next = 0
  return {
    url: instances[0]!.url,
    fetch: (path, init) => instances[next++ % instances.length]!.fetch(path, init),
  }
}

/** Runs the session flow on two instances started with `env`, and stops them. */
async function flowOnTwoInstances(env: Record<string, string>): Promise<void> {
  const instances = await Promise.all([startServerProcess(env, 'serverless'), startServerProcess(env, 'serverless')])
  try {
    await deployedSessionFlow(roundRobin(instances))
  }
  finally {
    await Promise.all(instances.map(instance => instance.stop()))
  }
}

describe('a vercel build served as its Node function', () => {
  it('carries a session across instances over Redis over HTTP: mock login, exchange, protected route, rotation, reuse detection, logout', async () => {
    const storage = await startUpstashStorage()
    try {
      await flowOnTwoInstances(storage.env)
    }
    finally {
      await storage.close()
    }
  })

  it('the same over TCP Redis with TLS (a rediss:// URL, the server checked against its CA)', async () => {
    const redis = await startRedisTls()
    try {
      await flowOnTwoInstances({
        NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'redis',
        NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL: `rediss://127.0.0.1:${redis.port}`,
        NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_TLS_CA: redis.ca.replace(/\n/g, '\\n'),
      })
    }
    finally {
      await redis.stop()
    }
  })
})

describe('a storage driver set at runtime that cannot work in serverless functions', () => {
  it('is refused when the function starts, with the build\'s message (the build recorded the target)', async () => {
    // The build checked 'upstash'; the function's environment switches to memory afterwards, once
    // through the app's prefix and once through NITRO_, which Nitro reads first.
    const envs: Array<Record<string, string>> = [
      { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'memory' },
      { NITRO_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'memory', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'upstash' },
    ]
    for (const env of envs) {
      const instance = await startServerProcess(env, 'serverless')
      try {
        await expect.poll(() => instance.output()).toContain('  - svcAuth.tokenRefresh.storage.driver \'memory\' cannot work on Vercel Functions (Nitro preset \'vercel\'): Vercel Functions run many short-lived instances with their own memory and a disk that is neither shared nor kept, so sessions would vanish or differ from one request to the next.')
        const res = await instance.fetch('/auth/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code: 'x' }) })
        expect(res.status).toBe(500)
      }
      finally {
        await instance.stop()
      }
    }
  })
})
