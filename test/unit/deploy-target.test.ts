import type { Resolver } from '@nuxt/kit'
import type { Nuxt } from '@nuxt/schema'
import { createHooks } from 'hookable'
import { describe, expect, it, vi } from 'vitest'
import { applyEnv } from 'nitropack/runtime/internal/utils.env'
import { applyDeployTarget, buildDriver, DEPLOY_TARGETS, setupDeployTarget, deployTargetOf, envPrefixes, isStaticPreset, normalizePreset, parseEnvValue, runtimeConfigValue, storageDriverError, type NitroTargetOptions } from '../../src/build/deploy-target'
import { DRIVER_TARGETS, driversFor } from '../../src/runtime/server/lib/config/runtime-target'
import { buildRuntimeConfig } from '../../src/build/runtime-config'
import { resolveOptions } from '../../src/build/resolve-options'

const STUB = '/module/runtime/password/server/bcrypt-unavailable'

/**
 * Resolved Nitro options as `nitro:init` sees them, with the module's runtime config (and the
 * environment prefix Nuxt gives Nitro).
 */
function nitroOptions(preset: string, extra: Partial<NitroTargetOptions> = {}, clientAddressHeader: string | false = '', driver = 'fs'): NitroTargetOptions {
  const options = resolveOptions({ token: { secret: 'x'.repeat(32) }, rateLimit: { clientAddressHeader }, tokenRefresh: { storage: { driver: driver as 'fs' } } }, true)
  return { preset, dev: false, alias: {}, runtimeConfig: { nitro: { envPrefix: 'NUXT_' }, svcAuth: buildRuntimeConfig(options, { dev: false }).private }, ...extra }
}

type SvcAuthConfig = { rateLimit: { clientAddressHeader: string | false }, tokenRefresh: { storage: { driver: string } }, deployTarget?: unknown }
const svcAuthOf = (nitro: NitroTargetOptions) => nitro.runtimeConfig.svcAuth as SvcAuthConfig

/** Applies the target with `driver` as the module writes it: in its options and in the runtime config. */
const apply = (nitro: NitroTargetOptions, driver: string, env: Record<string, string> = {}) => {
  svcAuthOf(nitro).tokenRefresh.storage.driver = driver
  return applyDeployTarget(nitro, { driver, env, nativeBcryptStub: STUB })
}

const headerOf = (nitro: NitroTargetOptions) => svcAuthOf(nitro).rateLimit.clientAddressHeader

describe('deploy targets of Nitro presets', () => {
  it('knows serverless and edge presets, first match wins; servers and static sites are none', () => {
    expect(deployTargetOf('cloudflare-module')).toMatchObject({ kind: 'edge', platform: 'Cloudflare Workers' })
    expect(deployTargetOf('cloudflare-pages')?.kind).toBe('edge')
    expect(deployTargetOf('cloudflare_durable')?.kind).toBe('edge')
    expect(deployTargetOf('vercel-edge')).toMatchObject({ kind: 'edge', unsupported: expect.stringContaining('\'vercel\' preset') })
    expect(deployTargetOf('vercel')).toMatchObject({ kind: 'serverless', clientAddressHeader: 'x-real-ip' })
    expect(deployTargetOf('netlify')).toMatchObject({ kind: 'serverless', clientAddressHeader: 'x-nf-client-connection-ip' })
    expect(deployTargetOf('netlifyEdge')?.unsupported).toContain('\'netlify\' preset')
    for (const preset of ['service-worker', 'winterjs', 'base-worker']) expect(deployTargetOf(preset)?.unsupported, preset).toBeTruthy()
    for (const preset of ['aws-lambda', 'aws-amplify', 'azure', 'azure-functions', 'azure-swa', 'firebase', 'firebase-app-hosting', 'deno-deploy', 'zeabur']) {
      expect(deployTargetOf(preset)?.kind, preset).toBe('serverless')
    }
    for (const preset of ['node-server', 'node-cluster', 'node', 'bun', 'deno-server', 'heroku', 'render-com', 'digital-ocean', 'vercel-static', 'netlify-static', 'cloudflare-pages-static', 'zeabur-static', 'static', 'github-pages', 'nitro-dev', undefined]) {
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
        '[svc-auth] This build cannot run on Vercel Functions:',
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
    const config = nitroOptions('vercel').runtimeConfig
    expect(buildDriver(config, 'fs', { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: ' upstash ' })).toBe('upstash')
    expect(buildDriver(config, 'fs', { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: '' })).toBe('fs')
    expect(() => apply(nitroOptions('vercel'), 'fs', { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'redis' })).not.toThrow()
    expect(() => apply(nitroOptions('vercel'), 'redis', { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'memory' })).toThrow(/'memory' cannot work/)
  })

  it('reads the driver the server will use: the app\'s own runtimeConfig.svcAuth wins over the module options', () => {
    // nuxt.config: svcAuth.tokenRefresh.storage.driver 'upstash', runtimeConfig.svcAuth…driver 'memory':
    // the runtime config is what the server reads.
    const nitro = nitroOptions('vercel')
    svcAuthOf(nitro).tokenRefresh.storage.driver = 'memory'
    expect(() => applyDeployTarget(nitro, { driver: 'upstash', env: {}, nativeBcryptStub: STUB })).toThrow(/'memory' cannot work on Vercel Functions/)
    // And the other way round: the module option alone does not fail a runtime config that works.
    const fine = nitroOptions('vercel')
    svcAuthOf(fine).tokenRefresh.storage.driver = 'upstash'
    expect(() => applyDeployTarget(fine, { driver: 'memory', env: {}, nativeBcryptStub: STUB })).not.toThrow()
    // A runtime config without the key: the module option.
    expect(buildDriver({ svcAuth: {} }, 'fs', {})).toBe('fs')
  })

  it('reads NITRO_ before the app\'s prefix (NUXT_), as Nitro applies the environment', () => {
    const vercel = () => nitroOptions('vercel')
    expect(() => apply(vercel(), 'upstash', { NITRO_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'memory' })).toThrow(/'memory' cannot work/)
    expect(() => apply(vercel(), 'upstash', { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'redis', NITRO_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'fs' })).toThrow(/'fs' cannot work/)
    expect(() => apply(vercel(), 'fs', { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'memory', NITRO_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'upstash' })).not.toThrow()
    // A JSON object for a group is merged into it.
    expect(() => apply(vercel(), 'upstash', { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE: '{"driver":"memory"}' })).toThrow(/'memory' cannot work/)
    // The app's own prefix (runtimeConfig.nitro.envPrefix) replaces NUXT_; without one, NITRO_ENV_PREFIX.
    const custom = vercel()
    custom.runtimeConfig.nitro = { envPrefix: 'APP_' }
    expect(() => apply(custom, 'upstash', { APP_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'fs' })).toThrow(/'fs' cannot work/)
    expect(() => apply(custom, 'upstash', { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'fs' })).not.toThrow()
    expect(envPrefixes({}, { NITRO_ENV_PREFIX: 'X_' })).toEqual(['NITRO_', 'X_'])
    expect(envPrefixes({ nitro: { envPrefix: 'NUXT_' } }, { NITRO_ENV_PREFIX: 'X_' })).toEqual(['NITRO_', 'NUXT_'])
    expect(envPrefixes({}, {})).toEqual(['NITRO_', '_'])
  })

  it('resolves a runtime config value as Nitro\'s own applyEnv does', () => {
    const cases: Array<Record<string, string>> = [
      {},
      { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'redis' },
      { NITRO_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'upstash', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'memory' },
      { NITRO_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: '', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'memory' },
      { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: '"redis"' },
      { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'undefined' },
      { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'null' },
      { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: '42' },
      { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'constructor' },
      { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE: '{"driver":"memory"}' },
      { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE: '{"driver":"memory"}', NITRO_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'redis' },
      { NUXT_SVC_AUTH_TOKEN_REFRESH: '{"storage":{"driver":"fs"}}' },
      { NUXT_SVC_AUTH: '{"tokenRefresh":{"storage":{"driver":"redis"}}}' },
      { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE: 'memory' },
    ]
    for (const env of cases) {
      const config = { nitro: { envPrefix: 'NUXT_' }, svcAuth: structuredClone(svcAuthOf(nitroOptions('vercel'))) }
      for (const [key, value] of Object.entries(env)) vi.stubEnv(key, value)
      const applied = applyEnv(structuredClone(config), { prefix: 'NITRO_', altPrefix: 'NUXT_', envExpansion: false }) as typeof config
      vi.unstubAllEnvs()
      const storage = (applied.svcAuth.tokenRefresh as unknown as { storage?: { driver?: unknown } }).storage
      expect(runtimeConfigValue(config, ['svcAuth', 'tokenRefresh', 'storage', 'driver'], env), JSON.stringify(env)).toEqual(typeof storage === 'object' ? storage.driver : undefined)
    }
    expect(parseEnvValue(' upstash ')).toBe(' upstash ')
    expect(parseEnvValue('true')).toBe(true)
    expect(parseEnvValue('toString')).toBe('toString')
  })

  it('records where the server runs in the runtime config (svcAuth.deployTarget, no secrets); development records nothing', () => {
    const vercel = nitroOptions('vercel')
    apply(vercel, 'upstash')
    expect(svcAuthOf(vercel).deployTarget).toEqual({ kind: 'serverless', platform: 'Vercel Functions', preset: 'vercel' })
    const workers = nitroOptions('cloudflareModule')
    apply(workers, 'upstash')
    expect(svcAuthOf(workers).deployTarget).toEqual({ kind: 'edge', platform: 'Cloudflare Workers', preset: 'cloudflare-module' })
    for (const preset of ['node-server', 'static']) {
      const server = nitroOptions(preset)
      apply(server, 'memory')
      expect(svcAuthOf(server).deployTarget).toEqual({ kind: 'server', platform: 'Node.js server', preset })
    }
    const dev = nitroOptions('vercel', { dev: true })
    apply(dev, 'memory')
    expect(svcAuthOf(dev).deployTarget).toBeUndefined()
  })

  it('leaves servers, static sites and development alone, besides the record', () => {
    for (const nitro of [nitroOptions('node-server'), nitroOptions('static'), nitroOptions('vercel', { dev: true }), nitroOptions('cloudflare-module', { dev: true })]) {
      apply(nitro, 'memory')
      const before = structuredClone(nitro)
      delete svcAuthOf(before).deployTarget
      expect(apply(nitro, 'memory')).toEqual({ changes: [] })
      delete svcAuthOf(nitro).deployTarget
      expect(nitro).toEqual(before)
    }
  })

  it('fails the edge presets of Vercel and Netlify, naming the Node.js preset to use instead', () => {
    expect(() => apply(nitroOptions('vercel-edge'), 'upstash')).toThrow([
      '[svc-auth] This build cannot run on Vercel Edge Functions:',
      '  - Nitro preset \'vercel-edge\' is not supported: the Edge runtime has no node:crypto (the module\'s HKDF, HMAC, AES-GCM and RSA keys) and no worker threads for bcrypt. Use the \'vercel\' preset (Node.js functions) instead; see docs/deploying.md of nuxt-svc-auth.',
    ].join('\n'))
    expect(() => apply(nitroOptions('netlify_edge'), 'upstash')).toThrow(/Netlify Edge Functions:\n {2}- Nitro preset 'netlify-edge' is not supported: .*Use the 'netlify' preset \(Node\.js functions\) instead/)
    // The Node.js functions of both still build.
    expect(() => apply(nitroOptions('vercel'), 'upstash')).not.toThrow()
    expect(() => apply(nitroOptions('netlify'), 'upstash')).not.toThrow()
  })

  it('fails presets the module cannot run on instead of building them as Node servers: a service worker (the server in the browser), WinterJS, the bare worker base', () => {
    expect(() => apply(nitroOptions('service-worker'), 'upstash')).toThrow(/the private runtime config \(the token secret, storage credentials, OAuth client secrets\) would be sent to every visitor/)
    expect(() => apply(nitroOptions('winterjs'), 'upstash')).toThrow(/Nitro preset 'winterjs' is not supported: it is not a Node\.js runtime/)
    expect(() => apply(nitroOptions('baseWorker'), 'upstash')).toThrow(/Nitro preset 'base-worker' is not supported/)
    for (const rule of DEPLOY_TARGETS.filter(r => r.unsupported)) expect(rule.unsupported, rule.preset).toMatch(/ instead$/)
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
    // false: no header on any preset (a cloudflare build served by workerd behind another proxy).
    const none = nitroOptions('cloudflare-module', {}, false)
    expect(apply(none, 'upstash').changes.join()).not.toContain('clientAddressHeader')
    expect(headerOf(none)).toBe(false)
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
    setupDeployTarget({ nuxt: nuxt as unknown as Nuxt, options, resolver: { resolve: (path: string) => `/module/${path.replace('./', '')}` } as unknown as Resolver, logger: { info, warn: vi.fn() }, features: [], clientFeatures: {} }, {})
    const callHook = hooks.callHook.bind(hooks) as unknown as (name: string, arg: unknown) => Promise<unknown>
    return { init: (nitro: NitroTargetOptions) => callHook('nitro:init', { options: nitro }), info }
  }

  it('checks the preset Nitro resolved when it is ready (nitro:init) and logs what it set', async () => {
    const { init, info } = fakeSetup('upstash')
    const nitro = nitroOptions('cloudflare-module', {}, '', 'upstash')
    await init(nitro)
    expect(nitro.alias['@node-rs/bcrypt']).toBe(STUB)
    expect(info).toHaveBeenCalledWith('Building for Cloudflare Workers: nitro.cloudflare.nodeCompat: true (the nodejs_compat flag); @node-rs/bcrypt replaced by a stub (passwords are hashed with bcryptjs); rateLimit.clientAddressHeader: \'cf-connecting-ip\'')
    await expect(fakeSetup('memory').init(nitroOptions('cloudflare-module', {}, '', 'memory'))).rejects.toThrow(/'memory' cannot work on Cloudflare Workers/)
  })

  it('leaves `nuxi prepare` alone (types only, often run on install)', async () => {
    const nitro = nitroOptions('cloudflare-module')
    await fakeSetup('memory', true).init(nitro)
    expect(nitro.alias).toEqual({})
  })
})
