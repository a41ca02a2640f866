import type { Resolver } from '@nuxt/kit'
import type { Nuxt } from '@nuxt/schema'
import { createHooks } from 'hookable'
import { describe, expect, it, vi } from 'vitest'
import { applyDeployTarget, buildDriver, setupDeployTarget, deployTargetOf, DRIVER_TARGETS, driversFor, isStaticPreset, normalizePreset, storageDriverError, type NitroTargetOptions } from '../../src/build/deploy-target'
import { buildRuntimeConfig } from '../../src/build/runtime-config'
import { resolveOptions } from '../../src/build/options'

const STUB = '/module/runtime/server/lib/password/bcrypt-unavailable'

/** Resolved Nitro options as `nitro:init` sees them, with the module's runtime config. */
function nitroOptions(preset: string, extra: Partial<NitroTargetOptions> = {}, clientAddressHeader = ''): NitroTargetOptions {
  const options = resolveOptions({ token: { secret: 'x'.repeat(32) }, rateLimit: { clientAddressHeader } }, true)
  return { preset, dev: false, alias: {}, runtimeConfig: { svcAuth: buildRuntimeConfig(options, { dev: false }).private }, ...extra }
}

const apply = (nitro: NitroTargetOptions, driver: string, env: Record<string, string> = {}) =>
  applyDeployTarget(nitro, { driver, env, nativeBcryptStub: STUB })

const headerOf = (nitro: NitroTargetOptions) => (nitro.runtimeConfig.svcAuth as { rateLimit: { clientAddressHeader: string } }).rateLimit.clientAddressHeader

describe('deploy targets of Nitro presets', () => {
  it('knows serverless and edge presets, first match wins; servers and static sites are none', () => {
    expect(deployTargetOf('cloudflare-module')).toMatchObject({ kind: 'edge', platform: 'Cloudflare Workers' })
    expect(deployTargetOf('cloudflare-pages')?.kind).toBe('edge')
    expect(deployTargetOf('cloudflare_durable')?.kind).toBe('edge')
    expect(deployTargetOf('vercel-edge')).toMatchObject({ kind: 'edge', clientAddressHeader: 'x-real-ip' })
    expect(deployTargetOf('vercel')).toMatchObject({ kind: 'serverless', clientAddressHeader: 'x-real-ip' })
    expect(deployTargetOf('netlify')).toMatchObject({ kind: 'serverless', clientAddressHeader: 'x-nf-client-connection-ip' })
    expect(deployTargetOf('netlifyEdge')?.kind).toBe('edge')
    for (const preset of ['aws-lambda', 'aws-amplify', 'azure', 'azure-functions', 'azure-swa', 'firebase', 'firebase-app-hosting', 'deno-deploy']) {
      expect(deployTargetOf(preset)?.kind, preset).toBe('serverless')
    }
    for (const preset of ['node-server', 'node-cluster', 'node', 'bun', 'deno-server', 'heroku', 'render-com', 'digital-ocean', 'vercel-static', 'netlify-static', 'cloudflare-pages-static', 'static', 'github-pages', 'nitro-dev', undefined]) {
      expect(deployTargetOf(preset), String(preset)).toBeUndefined()
    }
    expect(normalizePreset('cloudflareModule')).toBe('cloudflare-module')
    expect(isStaticPreset('vercel_static')).toBe(true)
  })

  it('tells where each storage driver works (upstash everywhere, redis not on edge runtimes, fs and memory on servers only)', () => {
    expect(DRIVER_TARGETS).toEqual({ fs: ['server'], memory: ['server'], redis: ['server', 'serverless'], upstash: ['server', 'serverless', 'edge'] })
    expect(driversFor('edge')).toEqual(['\'upstash\' (Redis over HTTP)'])
    expect(driversFor('serverless')).toEqual(['\'redis\' with a rediss:// URL (a Redis server the functions reach over TLS)', '\'upstash\' (Redis over HTTP)'])
    expect(storageDriverError('redis', deployTargetOf('vercel')!, 'vercel')).toBeUndefined()
    expect(storageDriverError('upstash', deployTargetOf('cloudflare-module')!, 'cloudflare-module')).toBeUndefined()
    // An unknown driver is the options check's to report.
    expect(storageDriverError('mongo', deployTargetOf('vercel')!, 'vercel')).toBeUndefined()
  })
})

describe('applyDeployTarget', () => {
  it('fails a serverless build with the fs or memory driver, naming the drivers that work there', () => {
    for (const driver of ['fs', 'memory']) {
      expect(() => apply(nitroOptions('vercel'), driver)).toThrow([
        '[nuxt-svc-auth] This build cannot run on Vercel Functions:',
        `  - svcAuth.tokenRefresh.storage.driver '${driver}' cannot work on Vercel Functions (Nitro preset 'vercel'): Vercel Functions run many short-lived instances with their own memory and a disk that is neither shared nor kept, so sessions would vanish or differ from one request to the next. Use 'redis' with a rediss:// URL (a Redis server the functions reach over TLS) or 'upstash' (Redis over HTTP); see docs/deploying.md of nuxt-svc-auth.`,
      ].join('\n'))
    }
    expect(() => apply(nitroOptions('aws-lambda'), 'fs')).toThrow(/'fs' cannot work on AWS Lambda/)
    expect(() => apply(nitroOptions('netlify'), 'redis')).not.toThrow()
  })

  it('fails a Cloudflare build with fs, memory or redis: only upstash works there', () => {
    for (const driver of ['fs', 'memory', 'redis']) {
      expect(() => apply(nitroOptions('cloudflare-module'), driver), driver).toThrow(/cannot work on Cloudflare Workers \(Nitro preset 'cloudflare-module'\).*Use 'upstash' \(Redis over HTTP\);/)
    }
    expect(() => apply(nitroOptions('cloudflare-pages'), 'redis')).toThrow('Cloudflare Workers give the redis driver no TCP connections')
    expect(() => apply(nitroOptions('cloudflare-module'), 'upstash')).not.toThrow()
  })

  it('reads the driver of the build\'s environment as the server will', () => {
    expect(buildDriver('fs', { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: ' upstash ' })).toBe('upstash')
    expect(buildDriver('fs', { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: '' })).toBe('fs')
    expect(() => apply(nitroOptions('vercel'), 'fs', { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'redis' })).not.toThrow()
    expect(() => apply(nitroOptions('vercel'), 'redis', { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'memory' })).toThrow(/'memory' cannot work/)
  })

  it('leaves servers, static sites and development alone', () => {
    for (const nitro of [nitroOptions('node-server'), nitroOptions('static'), nitroOptions('vercel', { dev: true }), nitroOptions('cloudflare-module', { dev: true })]) {
      const before = structuredClone(nitro)
      expect(apply(nitro, 'memory')).toEqual({ changes: [] })
      expect(nitro).toEqual(before)
    }
  })

  it('Cloudflare: turns Node.js compatibility on when the app left it unset, fails when the app turned it off', () => {
    const unset = nitroOptions('cloudflare-module')
    apply(unset, 'upstash')
    expect(unset.cloudflare).toEqual({ nodeCompat: true })
    const kept = nitroOptions('cloudflare-module', { cloudflare: { nodeCompat: true, ...{ deployConfig: true } } as NitroTargetOptions['cloudflare'] })
    apply(kept, 'upstash')
    expect(kept.cloudflare).toEqual({ nodeCompat: true, deployConfig: true })
    expect(() => apply(nitroOptions('cloudflare-module', { cloudflare: { nodeCompat: false } }), 'upstash')).toThrow('nitro.cloudflare.nodeCompat is false, but nuxt-svc-auth needs Node.js compatibility on Cloudflare')
    // Both mistakes at once, in one error.
    expect(() => apply(nitroOptions('cloudflare-module', { cloudflare: { nodeCompat: false } }), 'fs')).toThrow(/'fs' cannot work[\s\S]*nodeCompat is false/)
  })

  it('edge builds get a stand-in for the native @node-rs/bcrypt (bcryptjs hashes there); serverless builds keep the addon', () => {
    const edge = nitroOptions('cloudflare-module')
    expect(apply(edge, 'upstash').changes).toContain('@node-rs/bcrypt replaced by a stub (passwords are hashed with bcryptjs)')
    expect(edge.alias['@node-rs/bcrypt']).toBe(STUB)
    const own = nitroOptions('cloudflare-module', { alias: { '@node-rs/bcrypt': '/app/my-bcrypt' } })
    apply(own, 'upstash')
    expect(own.alias['@node-rs/bcrypt']).toBe('/app/my-bcrypt')
    const serverless = nitroOptions('vercel')
    apply(serverless, 'redis')
    expect(serverless.alias).toEqual({})
  })

  it('makes the platform\'s client address header the default, never over the app\'s own choice', () => {
    for (const [preset, driver, header] of [['cloudflare-module', 'upstash', 'cf-connecting-ip'], ['vercel', 'redis', 'x-real-ip'], ['netlify', 'upstash', 'x-nf-client-connection-ip']] as const) {
      const nitro = nitroOptions(preset)
      expect(apply(nitro, driver).changes).toContain(`rateLimit.clientAddressHeader: '${header}'`)
      expect(headerOf(nitro)).toBe(header)
    }
    const chosen = nitroOptions('vercel', {}, 'cf-connecting-ip')
    apply(chosen, 'redis')
    expect(headerOf(chosen)).toBe('cf-connecting-ip')
    // A platform without such a header (AWS Lambda behind API Gateway): nothing is assumed.
    const lambda = nitroOptions('aws-lambda')
    apply(lambda, 'redis')
    expect(headerOf(lambda)).toBe('')
    expect(headerOf(nitroOptions('node-server'))).toBe('')
  })
})

describe('setupDeployTarget', () => {
  /** A Nuxt whose `nitro:init` the test calls, with the module's set-up context. */
  function fakeSetup(driver: string, prepare = false) {
    const hooks = createHooks<Record<string, (arg: unknown) => unknown>>()
    const nuxt = { options: { _prepare: prepare }, hook: hooks.hook.bind(hooks) }
    const info = vi.fn()
    const options = resolveOptions({ token: { secret: 'x'.repeat(32) }, tokenRefresh: { storage: { driver: driver as 'fs' } } }, true)
    setupDeployTarget({ nuxt: nuxt as unknown as Nuxt, options, resolver: { resolve: (path: string) => `/module/${path.replace('./', '')}` } as unknown as Resolver, logger: { info, warn: vi.fn() } }, {})
    const callHook = hooks.callHook.bind(hooks) as unknown as (name: string, arg: unknown) => Promise<unknown>
    return { init: (nitro: NitroTargetOptions) => callHook('nitro:init', { options: nitro }), info }
  }

  it('checks the preset Nitro resolved when it is ready (nitro:init) and logs what it set', async () => {
    const { init, info } = fakeSetup('upstash')
    const nitro = nitroOptions('cloudflare-module')
    await init(nitro)
    expect(nitro.alias['@node-rs/bcrypt']).toBe(STUB)
    expect(info).toHaveBeenCalledWith('Building for Cloudflare Workers: nitro.cloudflare.nodeCompat: true (the nodejs_compat flag); @node-rs/bcrypt replaced by a stub (passwords are hashed with bcryptjs); rateLimit.clientAddressHeader: \'cf-connecting-ip\'')
    await expect(fakeSetup('memory').init(nitroOptions('cloudflare-module'))).rejects.toThrow(/'memory' cannot work on Cloudflare Workers/)
  })

  it('leaves `nuxi prepare` alone (types only, often run on install)', async () => {
    const nitro = nitroOptions('cloudflare-module')
    await fakeSetup('memory', true).init(nitro)
    expect(nitro.alias).toEqual({})
  })
})
