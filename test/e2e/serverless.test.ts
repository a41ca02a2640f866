import { spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { deployedSessionFlow } from './deployed-flow'
import { fixtureEntry } from './fixtures'
import type { Server } from './requests'
import { freePort } from './server-processes'
import { startRedisTls } from '../support/redis-servers'
import { startUpstashStorage } from './upstash-storage'

const RUNNER = resolve(import.meta.dirname, '../support/serve-node-handler.mjs')

interface Instance extends Server {
  output(): string
  stop(): Promise<void>
}

/** One instance of the `vercel` build's function: its Node handler served by a process of its own. */
async function startInstance(env: Record<string, string> = {}): Promise<Instance> {
  const port = await freePort()
  let log = ''
  const child = spawn(process.execPath, [RUNNER, fixtureEntry('serverless'), String(port)], {
    env: { ...process.env, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout.on('data', (d: Buffer) => (log += d.toString()))
  child.stderr.on('data', (d: Buffer) => (log += d.toString()))
  const exited = new Promise<void>(r => child.once('exit', () => r()))
  const deadline = Date.now() + 20_000
  while (!log.includes('Listening on')) {
    if (child.exitCode !== null) throw new Error(`The function exited early (${child.exitCode}):\n${log}`)
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`The function did not start:\n${log}`)
    }
    await new Promise(r => setTimeout(r, 50))
  }
  const url = `http://127.0.0.1:${port}`
  return {
    url,
    fetch: (path, init) => fetch(url + path, { redirect: 'manual', ...init }),
    output: () => log,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
      await exited
      clearTimeout(timer)
    },
  }
}

/**
 * Two instances of the function behind one address, taking requests in turn as a platform
 * spreads them: every step of a session lands on another instance than the one before, so
 * only what the shared storage holds carries a session.
 */
function roundRobin(instances: readonly Instance[]): Server {
  let next = 0
  return {
    url: instances[0]!.url,
    fetch: (path, init) => instances[next++ % instances.length]!.fetch(path, init),
  }
}

/** Runs the session flow on two instances started with `env`, and stops them. */
async function flowOnTwoInstances(env: Record<string, string>): Promise<void> {
  const instances = await Promise.all([startInstance(env), startInstance(env)])
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
      const instance = await startInstance(env)
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
