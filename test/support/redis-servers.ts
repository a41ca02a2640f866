import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis, type RedisOptions } from 'ioredis'
import { testRedisUrl } from './test-redis'

/**
 * Throwaway Redis servers on loopback ports for the tests: a plain one, a Redis Cluster, a master
 * watched by a sentinel, and a TLS-only server; the cluster and the sentinel setup can speak TLS only, too.
 * Each helper starts `redis-server` processes of its own (in a temporary directory), waits until
 * they serve, and `stop()` ends exactly those processes (by PID) and removes the directory. When
 * a helper fails half-way it stops what it started before it throws; processes still running when
 * the test process exits are killed then.
 */
export interface RedisNodeAddress {
  host: string
  port: number
}

export interface RunningRedis {
  stop(): Promise<void>
}

/** TLS of a harness: a throwaway CA and a server certificate (every server of the harness shares it). */
export interface RedisTlsOptions {
  /**
   * DNS name the server certificate is issued for (clients must check it with this name as SNI,
   * e.g. `tlsServername`). Without it the certificate is for the address 127.0.0.1.
   */
  serverName?: string
}

/** What a client needs to trust the servers of a TLS harness. */
export interface RedisTlsMaterial {
  /** PEM of the throwaway CA. */
  ca: string
  /** The certificate's DNS name, when it has one instead of 127.0.0.1. */
  serverName?: string
}

export interface RedisClusterOptions {
  /** Ports of the masters (their cluster bus ports, +10000, must be free too). Default: free ports. */
  ports?: number[]
  /** Number of masters when `ports` is not given. @default 3 */
  size?: number
  /** TLS only, on every node and on the cluster bus. */
  tls?: boolean | RedisTlsOptions
}

export interface RedisSentinelOptions {
  /** Master group name. @default 'mymaster' */
  name?: string
  /** TLS only, for the master, the sentinel and the sentinel's connection to the master. */
  tls?: boolean | RedisTlsOptions
}

const HOST = '127.0.0.1'
const START_TIMEOUT_MS = 60_000
const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, HOST, () => server.close(() => resolve(true)))
  })
}

/** A free loopback port whose cluster bus port (+10000) is free too. */
async function freeRedisPort(taken: Set<number>): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = 20000 + Math.floor(Math.random() * 15000)
    if (taken.has(port) || taken.has(port + 10000)) continue
    if (await portIsFree(port) && await portIsFree(port + 10000)) {
      taken.add(port)
      taken.add(port + 10000)
      return port
    }
  }
  throw new Error('No free port pair for redis-server')
}

/** Harnesses not stopped yet: killed when the test process exits (e.g. after a failed hook). */
const running = new Set<Processes>()
let exitHook = false

class Processes {
  readonly dir = mkdtempSync(join(tmpdir(), 'svc-auth-redis-'))
  private readonly children: ChildProcess[] = []
  private readonly logs = new Map<ChildProcess, string>()

  constructor() {
    running.add(this)
    if (!exitHook) {
      exitHook = true
      process.once('exit', () => {
        for (const processes of running) processes.killNow()
      })
    }
  }

  /** Starts `command` (`redis-server` unless told) in the harness directory. */
  start(args: string[], command = 'redis-server'): ChildProcess {
    const child = spawn(command, args, { cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'] })
    this.logs.set(child, '')
    const keep = (data: Buffer) => this.logs.set(child, ((this.logs.get(child) ?? '') + data.toString()).slice(-8000))
    child.stdout?.on('data', keep)
    child.stderr?.on('data', keep)
    child.on('error', error => this.logs.set(child, `${this.logs.get(child) ?? ''}\n${command}: ${error.message}`))
    this.children.push(child)
    return child
  }

  /** Runs `command` to its end; rejects with its output when it fails or outlives `timeoutMs`. */
  async run(command: string, args: string[], timeoutMs = START_TIMEOUT_MS): Promise<string> {
    const child = spawn(command, args, { cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (data: Buffer) => (output += data.toString()))
    child.stderr.on('data', (data: Buffer) => (output += data.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    try {
      const code = await new Promise<number | null>((resolve, reject) => {
        child.once('error', reject)
        child.once('close', resolve)
      })
      if (code !== 0) throw new Error(`${command} ${args.join(' ')} failed (${code ?? 'killed'}):\n${output}`)
      return output
    }
    finally {
      clearTimeout(timer)
    }
  }

  /** The servers' recent output, for error messages. */
  output(): string {
    return [...this.logs.values()].join('\n').slice(-4000)
  }

  /** A started server that is gone already (it could not start), if any. */
  exited(): ChildProcess | undefined {
    return this.children.find(child => child.exitCode !== null || child.signalCode !== null || child.pid === undefined)
  }

  /** Synchronous kill of every process still running and removal of the directory (process exit). */
  killNow(): void {
    for (const child of this.children) {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(child.pid, 'SIGKILL')
        }
        catch {
          // gone already
        }
      }
    }
    rmSync(this.dir, { recursive: true, force: true })
    running.delete(this)
  }

  async stop(): Promise<void> {
    await Promise.all(this.children.map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
      const exited = new Promise(resolve => child.once('exit', resolve))
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'), 5000)
      await exited
      clearTimeout(timer)
    }))
    rmSync(this.dir, { recursive: true, force: true })
    running.delete(this)
  }
}

/** Waits until `check` resolves true (polling), or throws with the servers' output. */
async function until(what: string, processes: Processes, check: () => Promise<boolean>, timeoutMs = START_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await check().catch(() => false)) return
    const gone = processes.exited()
    if (gone) throw new Error(`${what}: ${gone.spawnfile} exited (${gone.exitCode ?? gone.signalCode ?? 'not started'}):\n${processes.output()}`)
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs / 1000} s:\n${processes.output()}`)
    await sleep(100)
  }
}

/** Runs `use` on a short-lived probe client whose connection errors are expected (polled, not logged). */
async function probe<T>(options: RedisOptions, use: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({ ...options, host: options.host ?? HOST, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000, enableOfflineQueue: false })
  client.on('error', () => {})
  try {
    await client.connect()
    return await use(client)
  }
  finally {
    client.disconnect()
  }
}

const BASE_ARGS = ['--bind', HOST, '--save', '', '--appendonly', 'no', '--protected-mode', 'no']

interface Tls {
  material: RedisTlsMaterial
  /** ioredis `tls` option for the probes. */
  client: RedisOptions['tls']
  /** redis-server arguments besides the TLS port. */
  serverArgs: string[]
  /** redis-cli arguments. */
  cliArgs: string[]
}

/** A throwaway CA and one server certificate (for `serverName`, else for 127.0.0.1) in the harness directory. */
async function makeTls(processes: Processes, options: RedisTlsOptions): Promise<Tls> {
  const dir = processes.dir
  const openssl = (args: string[]) => processes.run('openssl', args)
  await openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=svc-auth test CA'])
  await openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${options.serverName ?? HOST}`])
  writeFileSync(join(dir, 'san.ext'), `subjectAltName=${options.serverName ? `DNS:${options.serverName}` : `IP:${HOST}`}\n`)
  await openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '1', '-extfile', 'san.ext'])
  const ca = readFileSync(join(dir, 'ca.crt'), 'utf8')
  const files = ['--tls-cert-file', join(dir, 'server.crt'), '--tls-key-file', join(dir, 'server.key'), '--tls-ca-cert-file', join(dir, 'ca.crt')]
  return {
    material: { ca, ...(options.serverName ? { serverName: options.serverName } : {}) },
    client: { ca, ...(options.serverName ? { servername: options.serverName } : {}) },
    // Servers accept clients without a certificate; the cluster bus and replication speak TLS.
    serverArgs: [...files, '--tls-auth-clients', 'no', '--tls-cluster', 'yes', '--tls-replication', 'yes'],
    cliArgs: ['--tls', '--cacert', join(dir, 'ca.crt'), ...(options.serverName ? ['--sni', options.serverName] : [])],
  }
}

const tlsOptions = (tls: boolean | RedisTlsOptions | undefined): RedisTlsOptions | undefined => (tls ? (tls === true ? {} : tls) : undefined)

/** Runs `start` with a fresh harness directory; stops everything started when it throws. */
async function withProcesses<T>(start: (processes: Processes) => Promise<T>): Promise<T> {
  const processes = new Processes()
  try {
    return await start(processes)
  }
  catch (error) {
    await processes.stop()
    throw error
  }
}

/**
 * A Redis Cluster of masters without replicas on loopback ports: `redis-server --cluster-enabled
 * yes` per node, then `redis-cli --cluster create`, then every node must report
 * `cluster_state:ok`. `size` (a number) is accepted for `{ size }`.
 */
export function startRedisCluster(options: RedisClusterOptions | number = {}): Promise<RunningRedis & { nodes: RedisNodeAddress[], tls?: RedisTlsMaterial }> {
  const { ports: wanted, size = 3, tls: tlsOption } = typeof options === 'number' ? { size: options } : options
  return withProcesses(async (processes) => {
    const taken = new Set<number>()
    const ports: number[] = wanted ? [...wanted] : []
    while (ports.length < size) ports.push(await freeRedisPort(taken))
    if (ports.length < 3) throw new Error('A Redis Cluster needs at least 3 masters')
    const wantsTls = tlsOptions(tlsOption)
    const tls = wantsTls ? await makeTls(processes, wantsTls) : undefined
    for (const port of ports) {
      const listen = tls ? ['--port', '0', '--tls-port', String(port), ...tls.serverArgs] : ['--port', String(port)]
      processes.start([...listen, ...BASE_ARGS, '--cluster-enabled', 'yes', '--cluster-config-file', join(processes.dir, `nodes-${port}.conf`), '--cluster-node-timeout', '5000', '--dir', processes.dir])
    }
    const connect = (port: number): RedisOptions => ({ port, ...(tls ? { tls: tls.client } : {}) })
    for (const port of ports) await until(`redis-server ${port} did not start`, processes, () => probe(connect(port), async c => (await c.ping()) === 'PONG'))
    await processes.run('redis-cli', [...(tls?.cliArgs ?? []), '--cluster', 'create', ...ports.map(p => `${HOST}:${p}`), '--cluster-replicas', '0', '--cluster-yes'])
    for (const port of ports) {
      await until(`cluster node ${port} did not reach cluster_state:ok`, processes, () => probe(connect(port), async c => String(await c.call('CLUSTER', 'INFO')).includes('cluster_state:ok')))
    }
    return { nodes: ports.map(port => ({ host: HOST, port })), ...(tls ? { tls: tls.material } : {}), stop: () => processes.stop() }
  })
}

/**
 * A master (`redis-server`) and one sentinel (`redis-server <conf> --sentinel`, quorum 1)
 * watching it as `name`. A string is accepted for `{ name }`.
 */
export function startRedisSentinel(options: RedisSentinelOptions | string = {}): Promise<RunningRedis & { sentinels: RedisNodeAddress[], master: RedisNodeAddress, name: string, tls?: RedisTlsMaterial }> {
  const { name = 'mymaster', tls: tlsOption } = typeof options === 'string' ? { name: options } : options
  return withProcesses(async (processes) => {
    const taken = new Set<number>()
    const masterPort = await freeRedisPort(taken)
    const sentinelPort = await freeRedisPort(taken)
    const wantsTls = tlsOptions(tlsOption)
    const tls = wantsTls ? await makeTls(processes, wantsTls) : undefined
    const connect = (port: number): RedisOptions => ({ port, ...(tls ? { tls: tls.client } : {}) })
    processes.start([...(tls ? ['--port', '0', '--tls-port', String(masterPort), ...tls.serverArgs] : ['--port', String(masterPort)]), ...BASE_ARGS, '--dir', processes.dir])
    await until('the master did not start', processes, () => probe(connect(masterPort), async c => (await c.ping()) === 'PONG'))
    const conf = join(processes.dir, 'sentinel.conf')
    // The sentinel rewrites its configuration file, so it gets one of its own.
    const tlsConf = tls ? ['port 0', `tls-port ${sentinelPort}`, ...pairs(tls.serverArgs).map(([k, v]) => `${k.slice(2)} ${v}`)] : [`port ${sentinelPort}`]
    writeFileSync(conf, [...tlsConf, `bind ${HOST}`, 'protected-mode no', `dir ${processes.dir}`, `sentinel monitor ${name} ${HOST} ${masterPort} 1`, `sentinel down-after-milliseconds ${name} 5000`, ''].join('\n'))
    processes.start([conf, '--sentinel'])
    await until('the sentinel did not report its master', processes, () => probe(connect(sentinelPort), async (c) => {
      const answer = await c.call('SENTINEL', 'get-master-addr-by-name', name) as string[] | null
      return Array.isArray(answer) && answer[1] === String(masterPort)
    }))
    return { sentinels: [{ host: HOST, port: sentinelPort }], master: { host: HOST, port: masterPort }, name, ...(tls ? { tls: tls.material } : {}), stop: () => processes.stop() }
  })
}

/** `['--a', '1', '--b', '2']` as `[['--a', '1'], ['--b', '2']]`. */
function pairs(args: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (let i = 0; i + 1 < args.length; i += 2) out.push([args[i]!, args[i + 1]!])
  return out
}

/** A Redis that only speaks TLS (`--port 0 --tls-port P`), with a certificate from a throwaway CA (`ca`: PEM). */
export function startRedisTls(options: RedisTlsOptions = {}): Promise<RunningRedis & { port: number, ca: string, serverName?: string }> {
  return withProcesses(async (processes) => {
    const tls = await makeTls(processes, options)
    const port = await freeRedisPort(new Set())
    processes.start(['--port', '0', '--tls-port', String(port), ...tls.serverArgs, ...BASE_ARGS, '--dir', processes.dir])
    await until('the TLS redis-server did not start', processes, () => probe({ port, tls: tls.client }, async c => (await c.ping()) === 'PONG'))
    return { port, ...tls.material, stop: () => processes.stop() }
  })
}

/**
 * A plain Redis on a free loopback port, of its own: the one a test run shares (test/support/global-setup.ts),
 * or one for a test that changes server-wide state (its script cache).
 */
export function startRedisServer(): Promise<RunningRedis & RedisNodeAddress & { pid: number }> {
  return withProcesses(async (processes) => {
    const port = await freeRedisPort(new Set())
    const child = processes.start(['--port', String(port), ...BASE_ARGS, '--dir', processes.dir])
    await until('the redis-server did not start', processes, () => probe({ port }, async c => (await c.ping()) === 'PONG'))
    return { host: HOST, port, pid: child.pid!, stop: () => processes.stop() }
  })
}

/** Deletes every key under `prefix` on the Redis at `url` (what a test wrote into the Redis the tests share). */
export async function deleteRedisKeys(prefix: string, url = testRedisUrl()): Promise<void> {
  const redis = new Redis(url)
  try {
    let cursor = '0'
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
      if (keys.length) await redis.del(...keys)
      cursor = next
    } while (cursor !== '0')
  }
  finally {
    await redis.quit()
  }
}
