import { storageDriverError, type RecordedDeployTarget, type TargetKind } from '../runtime/server/lib/config/runtime-target'
import { isRecord } from '../runtime/shared/values'
import type { SetupContext } from './setup-context'

/** Checks and settings that depend on the Nitro preset; the server checks the recorded target again. */

export { storageDriverError, type RecordedDeployTarget, type TargetKind }

/** One entry of {@link DEPLOY_TARGETS}. */
export interface DeployTargetRule {
  /** A Nitro preset name, or a prefix ending in `*` (`vercel*`). */
  preset: string
  kind: Exclude<TargetKind, 'server'>
  /** The platform, as messages name it. */
  platform: string
  /** The request header the platform sets to the client's address (and overwrites when a client sends it). */
  clientAddressHeader?: string
  /** Set for presets the module cannot run on: why, and what to use instead (the build fails). */
  unsupported?: string
}

/** Serverless, edge and unsupported presets, first match wins; any other preset is a `server`. */
export const DEPLOY_TARGETS: readonly DeployTargetRule[] = [
  { preset: 'cloudflare*', kind: 'edge', platform: 'Cloudflare Workers', clientAddressHeader: 'cf-connecting-ip' },
  {
    preset: 'vercel-edge',
    kind: 'edge',
    platform: 'Vercel Edge Functions',
    unsupported: 'the Edge runtime has no node:crypto (the module\'s HKDF, HMAC, AES-GCM and RSA keys) and no worker threads for bcrypt. Use the \'vercel\' preset (Node.js functions) instead',
  },
  {
    preset: 'netlify-edge',
    kind: 'edge',
    platform: 'Netlify Edge Functions',
    unsupported: 'Node.js modules the module needs are stand-ins there (node:worker_threads starts no thread, so a password hash would never finish), and nothing of the module is tested on it. Use the \'netlify\' preset (Node.js functions) instead',
  },
  { preset: 'vercel*', kind: 'serverless', platform: 'Vercel Functions', clientAddressHeader: 'x-real-ip' },
  { preset: 'netlify*', kind: 'serverless', platform: 'Netlify Functions', clientAddressHeader: 'x-nf-client-connection-ip' },
  { preset: 'aws-lambda', kind: 'serverless', platform: 'AWS Lambda' },
  { preset: 'aws-amplify', kind: 'serverless', platform: 'AWS Amplify Hosting' },
  { preset: 'azure*', kind: 'serverless', platform: 'Azure Functions / Static Web Apps' },
  { preset: 'firebase*', kind: 'serverless', platform: 'Firebase' },
  { preset: 'deno-deploy', kind: 'serverless', platform: 'Deno Deploy' },
  { preset: 'genezio', kind: 'serverless', platform: 'Genezio' },
  { preset: 'edgio', kind: 'serverless', platform: 'Edgio' },
  { preset: 'layer0', kind: 'serverless', platform: 'Edgio' },
  { preset: 'stormkit', kind: 'serverless', platform: 'Stormkit' },
  { preset: 'zeabur', kind: 'serverless', platform: 'Zeabur Functions' },
  {
    preset: 'service-worker',
    kind: 'edge',
    platform: 'a browser service worker',
    unsupported: 'this preset runs the server in the visitor\'s browser, so the private runtime config (the token secret, storage credentials, OAuth client secrets) would be sent to every visitor. Use a Node.js preset (\'node-server\', \'vercel\', \'netlify\', …) or \'cloudflare-module\' instead',
  },
  {
    preset: 'winterjs',
    kind: 'edge',
    platform: 'WinterJS',
    unsupported: 'it is not a Node.js runtime and lacks the Node.js modules the module uses (node:crypto, node:buffer, node:net). Use a Node.js preset or \'cloudflare-module\' instead',
  },
  {
    preset: 'base-worker',
    kind: 'edge',
    platform: 'a generic worker runtime',
    unsupported: 'this preset (the base of Nitro\'s worker presets) gives the Node.js modules the module uses as stand-ins only. Use a Node.js preset or \'cloudflare-module\' instead',
  },
]

/** A preset name as Nitro spells resolved presets: kebab-case (`cloudflareModule`, `cloudflare_module` → `cloudflare-module`). */
export function normalizePreset(preset: string): string {
  return preset.trim().replace(/([a-z0-9])([A-Z])/g, '$1-$2').replace(/_/g, '-').toLowerCase()
}

/** Presets that build a static site (no server routes, so nothing here applies). */
export function isStaticPreset(preset: string): boolean {
  const name = normalizePreset(preset)
  return name === 'static' || name.endsWith('-static') || name === 'github-pages' || name === 'gitlab-pages' || name.startsWith('nitro-')
}

/** The serverless, edge or unsupported target of a preset, or undefined for a server (and static presets). */
export function deployTargetOf(preset: string | undefined): DeployTargetRule | undefined {
  if (!preset || isStaticPreset(preset)) return undefined
  const name = normalizePreset(preset)
  return DEPLOY_TARGETS.find(rule => rule.preset.endsWith('*') ? name.startsWith(rule.preset.slice(0, -1)) : name === rule.preset)
}

/** True for Cloudflare presets (Workers and Pages run the same runtime). */
export function isCloudflarePreset(preset: string | undefined): boolean {
  return !!preset && normalizePreset(preset).startsWith('cloudflare')
}

/** The part of the resolved Nitro options the checks read and change. */
export interface NitroTargetOptions {
  preset: string
  dev: boolean
  /** Nitro's `cloudflare` preset options (`nodeCompat`). */
  cloudflare?: { nodeCompat?: boolean }
  alias: Record<string, string>
  runtimeConfig: Record<string, unknown>
}

/** What {@link applyDeployTarget} needs besides the Nitro options. */
export interface DeployTargetInput {
  /** `tokenRefresh.storage.driver` of the module options: used when the runtime config has none. */
  driver: string
  /** The build's environment (a driver given as NITRO_ or NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER counts). */
  env: Record<string, string | undefined>
  /** A module that stands in for `@node-rs/bcrypt` where native addons cannot load. */
  nativeBcryptStub: string
}

/** What {@link applyDeployTarget} did, for the build log. */
export interface DeployTargetResult {
  target?: DeployTargetRule
  /** Settings it changed. */
  changes: string[]
}

/** Prefixes of the variables that override the runtime config, in Nitro's order (nitropack's config.mjs). */
export function envPrefixes(runtimeConfig: Record<string, unknown>, env: Record<string, string | undefined>): [string, string] {
  const nitro = runtimeConfig.nitro
  const prefix = isRecord(nitro) && typeof nitro.envPrefix === 'string' ? nitro.envPrefix : undefined
  return ['NITRO_', prefix ?? env.NITRO_ENV_PREFIX ?? '_']
}

const ENV_KEYWORDS = new Map<string, unknown>([['true', true], ['false', false], ['null', null], ['undefined', undefined], ['nan', Number.NaN], ['infinity', Number.POSITIVE_INFINITY], ['-infinity', Number.NEGATIVE_INFINITY]])

/** A JSON reviver that drops keys able to pollute prototypes. */
function dropUnsafeKeys(key: string, value: unknown): unknown {
  if (key === '__proto__' || (key === 'constructor' && typeof value === 'object' && value !== null && 'prototype' in value)) return undefined
  return value
}

/** An environment value as Nitro reads it (`destr`): JSON-like text parsed, keywords as values, other text as it is. */
export function parseEnvValue(value: string | undefined): unknown {
  if (typeof value !== 'string') return value
  if (value.startsWith('"') && value.endsWith('"') && !value.includes('\\')) return value.slice(1, -1)
  const keyword = value.trim().toLowerCase()
  if (ENV_KEYWORDS.has(keyword)) return ENV_KEYWORDS.get(keyword)
  if (!/^\s*["[{]|^\s*-?\d{1,16}(?:\.\d{1,17})?(?:e[+-]?\d+)?\s*$/i.test(value)) return value
  try {
    return JSON.parse(value, dropUnsafeKeys) as unknown
  }
  catch {
    return value
  }
}

/** A runtime config key path as Nitro names its environment variable (`svcAuth_tokenRefresh` → `SVC_AUTH_TOKEN_REFRESH`). */
const envName = (path: string): string => path.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()

/** The value at `path` of the runtime config once Nitro has applied the environment (`applyEnv`). */
export function runtimeConfigValue(runtimeConfig: Record<string, unknown>, path: readonly string[], env: Record<string, string | undefined>): unknown {
  const [first, second] = envPrefixes(runtimeConfig, env)
  let node: unknown = runtimeConfig
  let key = ''
  for (const segment of path) {
    if (!isRecord(node) || !(segment in node)) return undefined
    key = key ? `${key}_${segment}` : segment
    const fromEnv = parseEnvValue(env[first + envName(key)] ?? env[second + envName(key)])
    let value = node[segment]
    if (isRecord(value) && isRecord(fromEnv)) value = { ...value, ...fromEnv }
    else value = fromEnv ?? value
    node = value
  }
  return node
}

const DRIVER_PATH = ['svcAuth', 'tokenRefresh', 'storage', 'driver'] as const

/** The storage driver the server will use: the runtime config's with the environment applied, else the option. */
export function buildDriver(runtimeConfig: Record<string, unknown>, driver: string, env: Record<string, string | undefined>): string {
  const value = runtimeConfigValue(runtimeConfig, DRIVER_PATH, env)
  if (value === undefined || value === null || value === '') return driver
  return typeof value === 'string' ? value.trim() : String(value)
}

/** What a build records for the server (`svcAuth.deployTarget`). */
export function recordOf(preset: string, target: DeployTargetRule | undefined): RecordedDeployTarget {
  return target ? { kind: target.kind, platform: target.platform, preset } : { kind: 'server', platform: 'Node.js server', preset }
}

/**
 * Applies the deploy target to the resolved Nitro options, in place; throws one error listing every
 * problem. Development servers are left alone.
 */
export function applyDeployTarget(nitro: NitroTargetOptions, input: DeployTargetInput): DeployTargetResult {
  const changes: string[] = []
  if (nitro.dev) return { changes }
  const preset = normalizePreset(nitro.preset)
  const target = deployTargetOf(nitro.preset)
  const svcAuth = nitro.runtimeConfig.svcAuth
  if (target) {
    const errors: string[] = []
    if (target.unsupported) errors.push(`Nitro preset '${preset}' is not supported: ${target.unsupported}; see docs/deploying.md of nuxt-svc-auth.`)
    else {
      const storage = storageDriverError(buildDriver(nitro.runtimeConfig, input.driver, input.env), target, preset)
      if (storage) errors.push(storage)
    }
    const cloudflare = isCloudflarePreset(nitro.preset)
    if (cloudflare && nitro.cloudflare?.nodeCompat === false) {
      errors.push('nitro.cloudflare.nodeCompat is false, but nuxt-svc-auth needs Node.js compatibility on Cloudflare (node:crypto, node:buffer, process.env): remove the setting (the module turns it on) or set it to true.')
    }
    if (errors.length) throw new Error(`[svc-auth] This build cannot run on ${target.platform}:\n${errors.map(e => `  - ${e}`).join('\n')}`)

    if (cloudflare && nitro.cloudflare?.nodeCompat === undefined) {
      nitro.cloudflare = { ...nitro.cloudflare, nodeCompat: true }
      changes.push('nitro.cloudflare.nodeCompat: true (the nodejs_compat flag)')
    }
    if (target.kind === 'edge' && !nitro.alias['@node-rs/bcrypt']) {
      nitro.alias['@node-rs/bcrypt'] = input.nativeBcryptStub
      changes.push('@node-rs/bcrypt replaced by a stub (passwords are hashed with bcryptjs)')
    }
    const rateLimit = isRecord(svcAuth) ? svcAuth.rateLimit : undefined
    // Empty (or absent): the platform's header. `false` (no header) and a header name are kept.
    if (target.clientAddressHeader && isRecord(rateLimit) && (rateLimit.clientAddressHeader === '' || rateLimit.clientAddressHeader === undefined)) {
      rateLimit.clientAddressHeader = target.clientAddressHeader
      changes.push(`rateLimit.clientAddressHeader: '${target.clientAddressHeader}'`)
    }
  }
  if (isRecord(svcAuth)) svcAuth.deployTarget = recordOf(preset, target)
  return { target, changes }
}

/** Applies the deploy target at `nitro:init`; `nuxi prepare` builds nothing to deploy and is skipped. */
export function setupDeployTarget(ctx: SetupContext, env: Record<string, string | undefined>): void {
  ctx.nuxt.hook('nitro:init', (nitro) => {
    if (ctx.nuxt.options._prepare) return
    const { target, changes } = applyDeployTarget(nitro.options, {
      driver: ctx.options.tokenRefresh.storage.driver,
      env,
      nativeBcryptStub: ctx.resolver.resolve('./runtime/password/server/bcrypt-unavailable'),
    })
    if (target && changes.length) ctx.logger.info(`Building for ${target.platform}: ${changes.join('; ')}`)
  })
}
