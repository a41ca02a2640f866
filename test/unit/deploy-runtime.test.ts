import { afterEach, describe, expect, it, vi } from 'vitest'
import { applyDeployTarget, type NitroTargetOptions } from '../../src/build/deploy-target'
import { resolveOptions } from '../../src/build/resolve-options'
import { buildRuntimeConfig } from '../../src/build/runtime-config'
import { createAuthContext } from '../../src/runtime/server/lib/core/context'
import { recordedDeployTarget, runtimeTarget, RUNTIME_SIGNALS, type RecordedDeployTarget } from '../../src/runtime/server/lib/config/runtime-target'
import { workerThreadsAvailable } from '../../src/runtime/server/lib/config/platform'
import type { ModuleOptions, StorageDriverName } from '../../src/runtime/types/options'
import { features } from './helpers/features'

// The server checks its storage driver against where it runs when it starts, as the build does:
// a driver given only at runtime (the environment, the app's runtime config) cannot slip past.

afterEach(() => {
  vi.unstubAllEnvs()
  vi.unstubAllGlobals()
})

const SERVERLESS: RecordedDeployTarget = { kind: 'serverless', platform: 'Vercel Functions', preset: 'vercel' }
const EDGE: RecordedDeployTarget = { kind: 'edge', platform: 'Cloudflare Workers', preset: 'cloudflare-module' }
const SERVER: RecordedDeployTarget = { kind: 'server', platform: 'Node.js server', preset: 'node-server' }

const options = (driver: StorageDriverName): ModuleOptions => resolveOptions({
  token: { secret: 'deploy-runtime-secret-0123456789-abcdefghij' },
  tokenRefresh: { storage: { driver, url: 'https://example.upstash.io', token: 'upstash-token' } },
  logging: { level: 'silent' },
}, true)

/** Starts an auth context, disposes it, and says whether it started. */
async function starts(driver: StorageDriverName, setup: Parameters<typeof createAuthContext>[1] = {}): Promise<true> {
  const ctx = await createAuthContext(options(driver), { ...setup, features })
  await ctx.dispose()
  return true
}

/** Clears the platform variables the test process may have, so each test sets its own. */
function noPlatformEnv() {
  for (const { env } of RUNTIME_SIGNALS) vi.stubEnv(env, undefined)
}

describe('the deploy target at runtime', () => {
  it('is the build\'s record; Workers, a fact of the runtime, win over a record that says otherwise', () => {
    expect(runtimeTarget(SERVERLESS, { env: { VERCEL: '1' }, workers: false })).toBe(SERVERLESS)
    expect(runtimeTarget(SERVER, { env: {}, workers: false })).toBe(SERVER)
    expect(runtimeTarget(EDGE, { env: {}, workers: true })).toBe(EDGE)
    for (const recorded of [SERVER, SERVERLESS, undefined]) {
      expect(runtimeTarget(recorded, { env: {}, workers: true })).toMatchObject({ kind: 'edge', platform: 'Cloudflare Workers', signal: 'detected at runtime: navigator.userAgent is Cloudflare-Workers' })
    }
  })

  it('without a record: the platforms\' variables (VERCEL, NETLIFY, AWS_LAMBDA_FUNCTION_NAME), else nothing (CI=true is no platform)', () => {
    expect(runtimeTarget(undefined, { env: { VERCEL: '1' }, workers: false })).toMatchObject({ kind: 'serverless', platform: 'Vercel Functions' })
    expect(runtimeTarget(undefined, { env: { NETLIFY: 'true' }, workers: false })).toMatchObject({ kind: 'serverless', platform: 'Netlify Functions' })
    expect(runtimeTarget(undefined, { env: { AWS_LAMBDA_FUNCTION_NAME: 'auth' }, workers: false })).toMatchObject({ kind: 'serverless', platform: 'AWS Lambda' })
    expect(runtimeTarget(undefined, { env: { CI: 'true', VERCEL: '' }, workers: false })).toBeUndefined()
    // A server build running where a platform's variable is set (prerendering on its build machine) stays a server.
    expect(runtimeTarget(SERVER, { env: { VERCEL: '1', NETLIFY: 'true' }, workers: false })).toBe(SERVER)
  })

  it('reads the record from the runtime config; anything else there counts as no record', () => {
    expect(recordedDeployTarget({ ...SERVERLESS })).toEqual(SERVERLESS)
    for (const bad of [undefined, null, 'serverless', {}, { kind: 'cloud', platform: 'x', preset: 'y' }, { kind: 'server', platform: 'x', preset: '' }, { kind: 'edge', preset: 'p' }]) {
      expect(recordedDeployTarget(bad), JSON.stringify(bad)).toBeUndefined()
    }
  })
})

describe('the options check when the server starts', () => {
  it('refuses fs and memory on a serverless record, with the build\'s own message', async () => {
    noPlatformEnv()
    // The build's message for the same driver and preset.
    const nitro: NitroTargetOptions = { preset: 'vercel', dev: false, alias: {}, runtimeConfig: { svcAuth: buildRuntimeConfig(options('memory'), { dev: false }).private } }
    const buildMessage = (() => {
      try {
        applyDeployTarget(nitro, { driver: 'memory', env: {}, nativeBcryptStub: 'stub' })
      }
      catch (error) {
        return (error as Error).message.split('\n')[1]!.replace(/^ {2}- /, '')
      }
    })()
    expect(buildMessage).toMatch(/^svcAuth\.tokenRefresh\.storage\.driver 'memory' cannot work on Vercel Functions \(Nitro preset 'vercel'\)/)
    await expect(createAuthContext(options('memory'), { deployTarget: SERVERLESS, features })).rejects.toThrow(`[svc-auth] Invalid configuration:\n  - ${buildMessage}`)
    await expect(createAuthContext(options('fs'), { deployTarget: SERVERLESS, features })).rejects.toThrow(/'fs' cannot work on Vercel Functions \(Nitro preset 'vercel'\)/)
    expect(await starts('upstash', { deployTarget: SERVERLESS })).toBe(true)
  })

  it('refuses redis (and fs, memory) on an edge record', async () => {
    noPlatformEnv()
    await expect(createAuthContext(options('redis'), { deployTarget: EDGE, features })).rejects.toThrow('svcAuth.tokenRefresh.storage.driver \'redis\' cannot work on Cloudflare Workers (Nitro preset \'cloudflare-module\'): Cloudflare Workers give the redis driver no TCP connections. Use \'upstash\' (Redis over HTTP)')
    await expect(createAuthContext(options('memory'), { deployTarget: EDGE, features })).rejects.toThrow(/'memory' cannot work on Cloudflare Workers/)
  })

  it('a server record keeps every driver, also where a platform variable is set (the existing server tests run with memory)', async () => {
    vi.stubEnv('VERCEL', '1')
    expect(await starts('memory', { deployTarget: SERVER })).toBe(true)
  })

  it('without a record: VERCEL, NETLIFY or AWS_LAMBDA_FUNCTION_NAME make it a serverless function; nothing set: a server', async () => {
    noPlatformEnv()
    vi.stubEnv('CI', 'true')
    expect(await starts('memory')).toBe(true)
    for (const { env } of RUNTIME_SIGNALS) {
      noPlatformEnv()
      vi.stubEnv(env, '1')
      await expect(createAuthContext(options('memory'), { features }), env).rejects.toThrow(new RegExp(`'memory' cannot work on .* \\(detected at runtime: ${env} is set\\)`))
    }
  })

  it('without a record on Workers (known by navigator.userAgent): memory is refused', async () => {
    noPlatformEnv()
    vi.stubGlobal('navigator', { userAgent: 'Cloudflare-Workers' })
    await expect(createAuthContext(options('memory'), { features })).rejects.toThrow('\'memory\' cannot work on Cloudflare Workers (detected at runtime: navigator.userAgent is Cloudflare-Workers)')
  })

  it('development is not checked (the developer\'s machine, whatever the preset; `vercel dev` sets VERCEL)', async () => {
    vi.stubEnv('VERCEL', '1')
    expect(await starts('memory', { dev: true, deployTarget: SERVERLESS })).toBe(true)
  })

  it('keeps the target on the context (the password engine reads it)', async () => {
    noPlatformEnv()
    const ctx = await createAuthContext(options('upstash'), { deployTarget: SERVERLESS, features })
    expect(ctx.deployTarget).toEqual(SERVERLESS)
    await ctx.dispose()
  })
})

describe('worker threads for bcrypt', () => {
  it('come from the deploy target where it is known: a Node deployment always has them, an edge one never', () => {
    vi.stubGlobal('navigator', { userAgent: 'Cloudflare-Workers' })
    expect(workerThreadsAvailable(SERVER)).toBe(true)
    expect(workerThreadsAvailable(SERVERLESS)).toBe(true)
    expect(workerThreadsAvailable()).toBe(false)
    vi.unstubAllGlobals()
    expect(workerThreadsAvailable(EDGE)).toBe(false)
    expect(workerThreadsAvailable()).toBe(true)
  })
})
