import { createHooks } from 'hookable'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { backgroundWorkOutlivesRequests, isCloudflareWorkers, isGlobalScopeRestricted, workerThreadsAvailable } from '../../src/runtime/server/lib/config/platform'
import { runAtStartup, startupMode, type RequestHooks } from '../../src/runtime/server/lib/config/startup'

afterEach(() => {
  vi.unstubAllGlobals()
  vi.restoreAllMocks()
})

const requestHooks = () => createHooks<{ request: () => Promise<void> }>() as RequestHooks & { callHook(name: 'request'): Promise<void> }

describe('the runtime', () => {
  it('Node: start-up checks at once, threads, background work', () => {
    expect(isCloudflareWorkers()).toBe(false)
    expect(isGlobalScopeRestricted()).toBe(false)
    expect(startupMode()).toBe('now')
    expect(workerThreadsAvailable()).toBe(true)
    expect(backgroundWorkOutlivesRequests()).toBe(true)
  })

  it('Cloudflare Workers, known by navigator.userAgent: the first request, no threads, no background work', () => {
    vi.stubGlobal('navigator', { userAgent: 'Cloudflare-Workers' })
    expect(isCloudflareWorkers()).toBe(true)
    expect(startupMode()).toBe('first-request')
    expect(workerThreadsAvailable()).toBe(false)
    expect(backgroundWorkOutlivesRequests()).toBe(false)
  })

  it('a runtime that refuses random values outside a request (Workers without navigator) is known by the rule itself', () => {
    vi.spyOn(globalThis.crypto, 'getRandomValues').mockImplementation(() => {
      throw new Error('Disallowed operation called within global scope.')
    })
    expect(isCloudflareWorkers()).toBe(false)
    expect(isGlobalScopeRestricted()).toBe(true)
    expect(startupMode()).toBe('first-request')
  })
})

describe('runAtStartup', () => {
  it('now: runs the task at once, never on a request', async () => {
    const hooks = requestHooks()
    const task = vi.fn(async () => {})
    runAtStartup(hooks, task, vi.fn(), 'now')
    expect(task).toHaveBeenCalledTimes(1)
    await hooks.callHook('request')
    expect(task).toHaveBeenCalledTimes(1)
  })

  it('now: a failure is reported once and never thrown', async () => {
    const report = vi.fn()
    runAtStartup(requestHooks(), () => Promise.reject(new Error('svcAuth.token.secret is required')), report, 'now')
    await vi.waitFor(() => expect(report).toHaveBeenCalledTimes(1))
    expect((report.mock.calls[0]![0] as Error).message).toBe('svcAuth.token.secret is required')
  })

  it('first-request: nothing until the first request, which waits for the task; later requests do not run it again', async () => {
    const hooks = requestHooks()
    const order: string[] = []
    const task = vi.fn(async () => {
      order.push('task started')
      await new Promise(r => setTimeout(r, 20))
      order.push('task done')
    })
    runAtStartup(hooks, task, vi.fn(), 'first-request')
    expect(task).not.toHaveBeenCalled()
    await hooks.callHook('request')
    order.push('first request handled')
    await Promise.all([hooks.callHook('request'), hooks.callHook('request')])
    expect(task).toHaveBeenCalledTimes(1)
    expect(order).toEqual(['task started', 'task done', 'first request handled'])
  })

  it('first-request: concurrent first requests start it once', async () => {
    const hooks = requestHooks()
    const task = vi.fn(() => new Promise<void>(r => setTimeout(r, 10)))
    runAtStartup(hooks, task, vi.fn(), 'first-request')
    await Promise.all(Array.from({ length: 5 }, () => hooks.callHook('request')))
    expect(task).toHaveBeenCalledTimes(1)
  })

  it('first-request: a configuration mistake is reported once, on the first request, which still goes on', async () => {
    const hooks = requestHooks()
    const report = vi.fn()
    runAtStartup(hooks, () => Promise.reject(new Error('svcAuth.token.secret must be at least 32 bytes long.')), report, 'first-request')
    expect(report).not.toHaveBeenCalled()
    await expect(hooks.callHook('request')).resolves.toBeUndefined()
    await hooks.callHook('request')
    expect(report).toHaveBeenCalledTimes(1)
  })
})
