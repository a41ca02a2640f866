import { isCloudflareWorkers } from './platform'

/**
 * What kind of platform runs the server: long-running Node processes, short-lived Node functions
 * that share no memory or lasting disk, or isolates without TCP (Cloudflare Workers).
 */
export type TargetKind = 'server' | 'serverless' | 'edge'

/** The deploy target a build records in the private runtime config (`svcAuth.deployTarget`); not an option. */
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
 * Where each storage driver works: `fs` and `memory` are per instance, so sessions would vanish on
 * functions and Workers; `redis` needs TCP (none on Workers); `upstash` (HTTP) works everywhere.
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

/** Why a storage driver cannot work on a target, or undefined; `source`: the Nitro preset or a runtime signal. */
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

/** The build's record from the runtime config, or undefined when there is none or it is malformed (an env override). */
export function recordedDeployTarget(value: unknown): RecordedDeployTarget | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const { kind, platform, preset } = value as Record<string, unknown>
  if (!KINDS.includes(kind as TargetKind) || typeof platform !== 'string' || typeof preset !== 'string' || !preset) return undefined
  return { kind: kind as TargetKind, platform, preset }
}

/** Cloudflare Workers, known by the runtime itself. */
const WORKERS: RuntimeTarget = { kind: 'edge', platform: 'Cloudflare Workers', signal: 'detected at runtime: navigator.userAgent is Cloudflare-Workers' }

/** Environment variables serverless platforms set, first match wins: the target of a build that recorded none. */
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
 * The deploy target the server runs on: Workers when the runtime is (whatever the record says), else
 * the build's record (a server build prerendering on Vercel is still a server), else {@link RUNTIME_SIGNALS}.
 */
export function runtimeTarget(recorded: RecordedDeployTarget | undefined, { env, workers = isCloudflareWorkers() }: RuntimeSignals): RuntimeTarget | undefined {
  if (workers) return recorded?.kind === 'edge' ? recorded : WORKERS
  if (recorded) return recorded
  return RUNTIME_SIGNALS.find(signal => !!env[signal.env])?.target
}
