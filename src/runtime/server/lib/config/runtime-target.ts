import { isCloudflareWorkers } from './platform'

/**
 * Where the server runs, as far as the storage and the password engine care: the same rules for
 * the build (src/build/deploy-target.ts, from the Nitro preset) and for the server when it starts
 * (from what the build recorded, else from signals of the runtime itself).
 */

/**
 * What kind of platform runs the server. `server`: a long-running Node process (one or several).
 * `serverless`: Node functions, many short-lived instances that share no memory and no disk
 * that lasts. `edge`: an isolate runtime without a Node process or TCP connections for the
 * storage (Cloudflare Workers).
 */
export type TargetKind = 'server' | 'serverless' | 'edge'

/**
 * The deploy target a build records in the private runtime config (`svcAuth.deployTarget`): set by
 * the module when Nitro resolved the preset, not an option. No secrets: the kind, the platform's
 * name as messages say it, the preset.
 */
export interface RecordedDeployTarget {
  kind: TargetKind
  /** The platform, as messages name it (`Vercel Functions`); `Node.js server` for servers. */
  platform: string
  /** The Nitro preset of the build (`vercel`). */
  preset: string
}

/** The deploy target the server runs on: the build's record, or what the runtime shows. */
export interface RuntimeTarget {
  kind: TargetKind
  platform: string
  /** The Nitro preset, when the build recorded the target. */
  preset?: string
  /** What showed the target when the build recorded none (or a server while this is Workers). */
  signal?: string
}

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

/** Drivers of {@link DRIVER_TARGETS} that work on a kind of target, as a message recommends them. */
export function driversFor(kind: TargetKind): string[] {
  return Object.entries(DRIVER_TARGETS).filter(([, kinds]) => kinds.includes(kind)).map(([name]) => DRIVER_ADVICE[name] ?? `'${name}'`)
}

function joinOr(items: string[]): string {
  return items.length > 1 ? `${items.slice(0, -1).join(', ')} or ${items.at(-1)}` : (items[0] ?? '')
}

/**
 * Why a storage driver cannot work on a target, or undefined when it can (or is unknown: the
 * options check reports that). `source` says how the target is known: the Nitro preset (the
 * build, and the server of a build that recorded it: the same message), or a runtime signal.
 */
export function storageDriverError(driver: string, target: Pick<RuntimeTarget, 'kind' | 'platform'>, source: string | { preset?: string, signal?: string }): string | undefined {
  const kinds = DRIVER_TARGETS[driver]
  if (!kinds || kinds.includes(target.kind)) return undefined
  const why = driver === 'redis'
    ? `${target.platform} give the redis driver no TCP connections`
    : target.kind === 'edge'
      ? `${target.platform} run many short-lived isolates with no file system and no memory they share, so sessions would vanish or differ from one request to the next`
      : `${target.platform} run many short-lived instances with their own memory and a disk that is neither shared nor kept, so sessions would vanish or differ from one request to the next`
  const from = typeof source === 'string' ? { preset: source } : source
  const where = from.preset ? `Nitro preset '${from.preset}'` : (from.signal ?? 'detected when the server started')
  return `svcAuth.tokenRefresh.storage.driver '${driver}' cannot work on ${target.platform} (${where}): ${why}. Use ${joinOr(driversFor(target.kind))}; see docs/deploying.md of nuxt-svc-auth.`
}

const KINDS: readonly TargetKind[] = ['server', 'serverless', 'edge']

/**
 * The build's record from the runtime config, or undefined when there is none or it is not one
 * (the environment can override any runtime config key; a value that is not a record counts as
 * none, and the runtime's signals decide).
 */
export function recordedDeployTarget(value: unknown): RecordedDeployTarget | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const { kind, platform, preset } = value as Record<string, unknown>
  if (!KINDS.includes(kind as TargetKind) || typeof platform !== 'string' || typeof preset !== 'string' || !preset) return undefined
  return { kind: kind as TargetKind, platform, preset }
}

/** Cloudflare Workers, known by the runtime itself. */
const WORKERS: RuntimeTarget = { kind: 'edge', platform: 'Cloudflare Workers', signal: 'detected at runtime: navigator.userAgent is Cloudflare-Workers' }

/**
 * Environment variables the serverless platforms set in their functions, first match wins: the
 * target of a server whose build recorded none (a build made by an older version of the module).
 */
export const RUNTIME_SIGNALS: ReadonlyArray<{ env: string, target: RuntimeTarget }> = [
  { env: 'VERCEL', target: { kind: 'serverless', platform: 'Vercel Functions', signal: 'detected at runtime: VERCEL is set' } },
  { env: 'NETLIFY', target: { kind: 'serverless', platform: 'Netlify Functions', signal: 'detected at runtime: NETLIFY is set' } },
  { env: 'AWS_LAMBDA_FUNCTION_NAME', target: { kind: 'serverless', platform: 'AWS Lambda', signal: 'detected at runtime: AWS_LAMBDA_FUNCTION_NAME is set' } },
]

/** What {@link runtimeTarget} reads besides the record. */
export interface RuntimeSignals {
  /** The server's environment. */
  env: Readonly<Record<string, string | undefined>>
  /** @default isCloudflareWorkers() */
  workers?: boolean
}

/**
 * The deploy target the server runs on. Cloudflare Workers are a fact of the runtime and win over
 * a record that says otherwise (a preset the build took for a server). Otherwise the build's
 * record, which is all there is to know: a server build that runs on a platform's build machine
 * (prerendering on Vercel or Netlify, where their variables are set) is still a server. Without a
 * record, the platforms' environment variables ({@link RUNTIME_SIGNALS}); none: undefined (a
 * server, nothing to check).
 */
export function runtimeTarget(recorded: RecordedDeployTarget | undefined, { env, workers = isCloudflareWorkers() }: RuntimeSignals): RuntimeTarget | undefined {
  if (workers) return recorded?.kind === 'edge' ? recorded : WORKERS
  if (recorded) return recorded
  return RUNTIME_SIGNALS.find(signal => !!env[signal.env])?.target
}
