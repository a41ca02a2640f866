import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deployedSessionFlow } from './deployed-flow'
import { startUpstashStorage, type UpstashStorage } from './upstash-storage'
import { startWorkerd, type WorkerdServer } from './workerd'

let storage: UpstashStorage
let server: WorkerdServer

beforeAll(async () => {
  storage = await startUpstashStorage()
  // Text bindings: with nodejs_compat they are the worker's process.env, read as runtime config.
  server = await startWorkerd('worker', { bindings: storage.env })
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await storage?.close()
})

describe('a cloudflare-module build under workerd', () => {
  it('logs in with the mock provider, exchanges the code, serves a protected route, rotates and detects reuse, logs out', async () => {
    await deployedSessionFlow(server)
  })

  it('starts without a storage call at global scope (Workers forbid I/O outside a request)', () => {
    expect(server.output()).not.toContain('Disallowed operation called within global scope')
  })
})
