import type { SetupContext } from './setup-context'

/**
 * Checks and settings that depend on where the build is deployed, read from the Nitro preset once
 * Nitro has resolved it (`nitro:init`): a storage driver that cannot work there fails the build,
 * Cloudflare gets Node.js compatibility, and the platform's client address header becomes the
 * default of `rateLimit.clientAddressHeader`.
 */

/**
 * What kind of platform runs the server. `server`: a long-running Node process (one or several).
 * `serverless`: Node functions, many short-lived instances that share no memory and no disk
 * that lasts. `edge`: an isolate runtime without a Node process or TCP connections for the
 * storage (Cloudflare Workers).
 */
export type TargetKind = 'server' | 'serverless' | 'edge'

/** One entry of {@link DEPLOY_TARGETS}. */
export interface DeployTargetRule {
  /** A Nitro preset name, or a prefix ending in `*` (`vercel*`). */
  preset: string
  kind: Exclude<TargetKind, 'server'>
  /** The platform, as messages name it. */
  platform: string
  /** The request header the platform sets to the client's address (and overwrites when a client sends it). */
  clientAddressHeader?: string
}

/**
 * Nitro presets that deploy to serverless functions or an edge runtime, first match wins; any
 * other preset (`node-server`, `node-cluster`, `bun`, `deno-server`, hosts that run a Node
 * server such as `heroku` or `render-com`) is a `server`. Static presets (`*-static`,
 * `github-pages`, …) serve no server routes: {@link isStaticPreset}.
 */
export const DEPLOY_TARGETS: readonly DeployTargetRule[] = [
  { preset: 'cloudflare*', kind: 'edge', platform: 'Cloudflare Workers', clientAddressHeader: 'cf-connecting-ip' },
  { preset: 'vercel-edge', kind: 'edge', platform: 'Vercel Edge Functions', clientAddressHeader: 'x-real-ip' },
  { preset: 'netlify-edge', kind: 'edge', platform: 'Netlify Edge Functions', clientAddressHeader: 'x-nf-client-connection-ip' },
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
]

/**
 * Where each storage driver of `tokenRefresh.storage.driver` works. `fs` and `memory` keep the
 * records in one machine's disk or one process's memory: on serverless functions and Workers
 * every instance would have its own (and lose them when it stops), so sessions would vanish at
 * random. `redis` needs TCP connections (serverless functions have them; Workers do not give
 * them to ioredis). `upstash` is Redis over HTTP (fetch): everywhere.
 */
export const DRIVER_TARGETS: Readonly<Record<string, readonly TargetKind[]>> = {
  fs: ['server'],
  memory: ['server'],
  redis: ['server', 'serverless'],
  upstash: ['server', 'serverless', 'edge'],
}

/** How {@link DRIVER_TARGETS} entries are recommended in messages, per kind of target. */
const DRIVER_ADVICE: Readonly<Record<string, string>> = {
  redis: '\'redis\' with a rediss:// URL (a Redis server the functions reach over TLS)',
  upstash: '\'upstash\' (Redis over HTTP)',
}

/** A preset name as Nitro spells resolved presets: kebab-case (`cloudflareModule`, `cloudflare_module` → `cloudflare-module`). */
export function normalizePreset(preset: string): string {
  return preset.trim().replace(/([a-z0-9])([A-Z])/g, '$1-$2').replace(/_/g, '-').toLowerCase()
}

/** Presets that build a static site (no server routes, so nothing here applies). */
export function isStaticPreset(preset: string): boolean {
  const name = normalizePreset(preset)
  return name === 'static' || name.endsWith('-static') || name === 'github-pages' || name === 'gitlab-pages' || name.startsWith('nitro-')
}

/** The serverless or edge target of a preset, or undefined for a server (and static presets). */
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
  /** The private runtime config (`svcAuth.rateLimit.clientAddressHeader` is read and set). */
  runtimeConfig: Record<string, unknown>
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** What {@link applyDeployTarget} needs besides the Nitro options. */
export interface DeployTargetInput {
  /** `tokenRefresh.storage.driver` of the build. */
  driver: string
  /** The build's environment (a driver given as NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER counts). */
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

/** The storage driver the server will use: the build's environment first, as at runtime. */
export function buildDriver(driver: string, env: Record<string, string | undefined>): string {
  return env.NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER?.trim() || driver
}

/** Drivers of {@link DRIVER_TARGETS} that work on a kind of target, as a message recommends them. */
export function driversFor(kind: TargetKind): string[] {
  return Object.entries(DRIVER_TARGETS).filter(([, kinds]) => kinds.includes(kind)).map(([name]) => DRIVER_ADVICE[name] ?? `'${name}'`)
}

/**
 * Why a storage driver cannot work on a target, or undefined when it can (or is unknown: the
 * options check reports that).
 */
export function storageDriverError(driver: string, target: DeployTargetRule, preset: string): string | undefined {
  const kinds = DRIVER_TARGETS[driver]
  if (!kinds || kinds.includes(target.kind)) return undefined
  const why = driver === 'redis'
    ? `${target.platform} give the redis driver no TCP connections`
    : target.kind === 'edge'
      ? `${target.platform} run many short-lived isolates with no file system and no memory they share, so sessions would vanish or differ from one request to the next`
      : `${target.platform} run many short-lived instances with their own memory and a disk that is neither shared nor kept, so sessions would vanish or differ from one request to the next`
  return `svcAuth.tokenRefresh.storage.driver '${driver}' cannot work on ${target.platform} (Nitro preset '${preset}'): ${why}. Use ${joinOr(driversFor(target.kind))}; see docs/deploying.md of nuxt-svc-auth.`
}

function joinOr(items: string[]): string {
  return items.length > 1 ? `${items.slice(0, -1).join(', ')} or ${items.at(-1)}` : (items[0] ?? '')
}

/**
 * Applies the deploy target to the resolved Nitro options, in place. Throws one error listing
 * every problem: a storage driver that cannot work there, and on Cloudflare Node.js
 * compatibility turned off. Otherwise, for a serverless or edge preset: sets Cloudflare's
 * `nodeCompat` when the app left it unset (Nitro then writes the `nodejs_compat` flag into the
 * generated wrangler config), replaces `@node-rs/bcrypt` with a stub on edge presets (no native
 * addons there; bcryptjs computes instead), and makes the platform's client address header the
 * default of `rateLimit.clientAddressHeader`. Development servers are left alone.
 */
export function applyDeployTarget(nitro: NitroTargetOptions, input: DeployTargetInput): DeployTargetResult {
  const changes: string[] = []
  if (nitro.dev) return { changes }
  const target = deployTargetOf(nitro.preset)
  if (!target) return { changes }
  const errors: string[] = []
  const storage = storageDriverError(buildDriver(input.driver, input.env), target, normalizePreset(nitro.preset))
  if (storage) errors.push(storage)
  const cloudflare = isCloudflarePreset(nitro.preset)
  if (cloudflare && nitro.cloudflare?.nodeCompat === false) {
    errors.push('nitro.cloudflare.nodeCompat is false, but nuxt-svc-auth needs Node.js compatibility on Cloudflare (node:crypto, node:buffer, process.env): remove the setting (the module turns it on) or set it to true.')
  }
  if (errors.length) throw new Error(`[nuxt-svc-auth] This build cannot run on ${target.platform}:\n${errors.map(e => `  - ${e}`).join('\n')}`)

  if (cloudflare && nitro.cloudflare?.nodeCompat === undefined) {
    nitro.cloudflare = { ...nitro.cloudflare, nodeCompat: true }
    changes.push('nitro.cloudflare.nodeCompat: true (the nodejs_compat flag)')
  }
  if (target.kind === 'edge' && !nitro.alias['@node-rs/bcrypt']) {
    nitro.alias['@node-rs/bcrypt'] = input.nativeBcryptStub
    changes.push('@node-rs/bcrypt replaced by a stub (passwords are hashed with bcryptjs)')
  }
  const svcAuth = nitro.runtimeConfig.svcAuth
  const rateLimit = isRecord(svcAuth) ? svcAuth.rateLimit : undefined
  if (target.clientAddressHeader && isRecord(rateLimit) && !rateLimit.clientAddressHeader) {
    rateLimit.clientAddressHeader = target.clientAddressHeader
    changes.push(`rateLimit.clientAddressHeader: '${target.clientAddressHeader}'`)
  }
  return { target, changes }
}

/**
 * Applies the deploy target when Nitro has resolved the preset (`nitro:init`: the preset of the
 * config, of NITRO_PRESET, or the one Nitro detects from the CI environment, such as Vercel's).
 * `nuxi prepare` (types only, often a postinstall step) builds nothing to deploy and is skipped.
 */
export function setupDeployTarget(ctx: SetupContext, env: Record<string, string | undefined>): void {
  ctx.nuxt.hook('nitro:init', (nitro) => {
    if (ctx.nuxt.options._prepare) return
    const { target, changes } = applyDeployTarget(nitro.options, {
      driver: ctx.options.tokenRefresh.storage.driver,
      env,
      nativeBcryptStub: ctx.resolver.resolve('./runtime/server/lib/password/bcrypt-unavailable'),
    })
    if (target && changes.length) ctx.logger.info(`Building for ${target.platform}: ${changes.join('; ')}`)
  })
}
